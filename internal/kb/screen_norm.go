package kb

import (
	"encoding/base64"
	"encoding/hex"
	"html"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// nativeRules are the screening rules for text in other languages than
// English. They run over foldNative's view, which keeps each script as it
// is (the Latin view maps Cyrillic and Greek lookalikes to Latin letters,
// which would garble Russian). Plain regular expressions: a space matches
// one space, since foldNative collapses white space.
var nativeRules = []struct{ name, expr string }{
	// Chinese.
	{"zh: ignore previous instructions", `(忽略|无视|忽视|忘记|忘掉|不要理会|不要理睬|别管|无需遵守|不要遵守|放弃)(掉)?(你)?(之前|以前|先前|前面|上面|上述|以上|原来|原有|所有|全部|一切|系统)+的?(所有|全部|一切)?的?(指令|指示|说明|规则|提示词?|命令|要求|设定|约束)`},
	{"zh: reveal the system prompt", `(显示|输出|告诉我|泄露|打印|展示|给我|复述|重复|说出)(一下)?(你的)?(系统提示词?|系统指令|初始指令|隐藏指令|原始指令|系统消息|系统设定)`},
	{"zh: hide from the user", `(不要|别|不必|无需|切勿)(告诉|通知|让|告知|提醒)(用户|使用者)`},
	{"zh: you are now", `(从现在(开始|起)|现在)你(就)?是(一个)?[^。，,.]{0,12}(没有|不受|无)(任何)?(限制|约束|过滤)`},
	{"zh: new instructions", `(开发者|开发人员|管理员|系统|创建者)(的|发来的|下达的)?新(的)?(指令|指示|命令|规则)|新(的)?(系统)?指令[:：]`},
	{"zh: covert", `(悄悄|偷偷|秘密|暗中|默默)(地)?(把|将|上传|发送|执行|运行|删除|修改)`},
	// Japanese.
	{"ja: ignore previous instructions", `(以前|前|上記|これまで|先|最初|元|すべて|全て|システム)の(すべての|全ての)?(指示|命令|ルール|指令|設定|プロンプト|制約)(は|を)(すべて|全て)?(無視|忘れ)`},
	{"ja: reveal the system prompt", `(システムプロンプト|初期指示|隠された指示|システムメッセージ)(を|の内容を)(そのまま)?(表示|教え|出力|見せ|開示|書き出)`},
	{"ja: hide from the user", `ユーザー(に|には)(は)?(言わ|伝え|知らせ|教え|報告し)ないで`},
	{"ja: you are now", `(あなたは|君は)(今から|これから|今)[^。]{0,16}(制限|制約|フィルター)(のない|なし|を持たない)`},
	{"ja: new instructions", `(開発者|管理者|システム)(から|より)の新しい(指示|命令|ルール)`},
	// Spanish.
	{"es: ignore previous instructions", `\b(ignora|ignore|ignoren|olvida|olvide|olviden|descarta|descarte|omite|omita|haz caso omiso (de|a)|no hagas caso (de|a))( todas| todo)?( las| los| tus| sus)? (instrucciones|indicaciones|reglas|órdenes|ordenes|directrices|normas|instrucción)( anteriores| previas| de arriba| del sistema| originales| dadas)?`},
	{"es: reveal the system prompt", `\b(revela|muestra|muéstrame|imprime|dime|repite|enséñame)( el| tu| su)? (prompt|mensaje|indicaciones|instrucciones) (del|de) sistema`},
	{"es: hide from the user", `\bno (le )?(digas|diga|cuentes|cuente|informes|informe|menciones|mencione|avises|avise)( nada)? al usuario`},
	{"es: you are now", `\b(a partir de ahora|ahora) (eres|serás|actúas como) (un|una)? ?[^.,]{0,30}(sin (restricciones|filtros|límites|reglas)|libre)`},
	{"es: new instructions", `\bnuevas (instrucciones|órdenes|reglas|directrices) (del|de la|de los) (desarrollador|desarrolladores|administrador|sistema|creador)`},
	// French.
	{"fr: ignore previous instructions", `\b(ignore|ignorez|ignorer|oublie|oubliez|oublier|ne tiens pas compte|ne tenez pas compte|fais abstraction|faites abstraction)( de| des)?( toutes| tous)?( les| tes| vos)? (instructions|consignes|règles|directives|ordres)( précédentes| antérieures| ci-dessus| du système| initiales| d'origine)`},
	{"fr: reveal the system prompt", `\b(révèle|révélez|affiche|affichez|montre|montrez|donne|donnez|répète|répétez)(-moi)?( ton| votre| le)? (prompt|message|invite) (système|du système)`},
	{"fr: hide from the user", `\bne (le |lui )?(dis|dites|révèle|révélez|mentionne|mentionnez|signale|signalez)( rien| pas)?( de ceci| cela| ça)? à l'utilisateur`},
	{"fr: you are now", `\b(tu es|vous êtes) (maintenant|désormais|à présent) (un|une)? ?[^.,]{0,30}(sans (aucune )?(restriction|restrictions|filtre|filtres|limite|limites|règle|règles))`},
	{"fr: new instructions", `\bnouvelles (instructions|consignes|règles|directives) (du|de l'|des) ?(développeur|développeurs|administrateur|système|créateur)`},
	// German.
	{"de: ignore previous instructions", `\b(ignoriere|ignorier|ignoriert|ignorieren sie|vergiss|vergesst|vergessen sie|missachte|missachten sie|übergehe)( alle| sämtliche)?( die| deine| ihre)? (vorherigen|bisherigen|obigen|vorigen|früheren|ursprünglichen|system)?-? ?(anweisungen|instruktionen|regeln|befehle|vorgaben|richtlinien)`},
	{"de: reveal the system prompt", `\b(zeige|zeig|gib|nenne|wiederhole|verrate)( mir)? (deinen|deine|den|die|ihren) (systemprompt|system-prompt|systemanweisungen|systemnachricht|anweisungen)`},
	{"de: hide from the user", `\b(sag|sage|erzähl|erzähle|verrate)( es| das)? (dem|den) (benutzer|nutzer|anwender)( nichts| nicht)|\b(sag|sage|erzähl|erzähle)( dem| den)? (benutzer|nutzer|anwender) nichts`},
	{"de: you are now", `\bdu bist (jetzt|ab sofort|nun) (ein|eine)? ?[^.,]{0,30}(ohne (einschränkungen|filter|regeln|grenzen))`},
	{"de: new instructions", `\bneue (anweisungen|instruktionen|regeln|befehle) (vom|von der|von den) (entwickler|administrator|admin|system|ersteller)`},
	// Russian.
	{"ru: ignore previous instructions", `(игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте|не обращай внимания на|не обращайте внимания на|отбрось|отбросьте)( все| всё)?( свои| ваши)? (предыдущие|прежние|вышеуказанные|вышеизложенные|системные|исходные|свои|все)? ?(инструкции|указания|правила|команды|ограничения|установки)`},
	{"ru: reveal the system prompt", `(покажи|покажите|выведи|выведите|раскрой|раскройте|напиши|повтори|скажи)( мне)?( свой| ваш| свои)? (системный промпт|системную подсказку|системные инструкции|системное сообщение|исходные инструкции)`},
	{"ru: hide from the user", `не (говори|говорите|сообщай|сообщайте|рассказывай|рассказывайте|показывай|показывайте) (об этом )?пользователю`},
	{"ru: you are now", `теперь ты [^.,]{0,30}(без (ограничений|фильтров|правил)|не ограничен)`},
	{"ru: new instructions", `новые (инструкции|указания|правила|команды) от (разработчика|разработчиков|администратора|системы|создателя)`},
	// Portuguese.
	{"pt: ignore previous instructions", `\b(ignore|ignora|ignorem|esqueça|esqueca|esqueçam|desconsidere|desconsidera|descarte|despreze)( todas| todos)?( as| os| suas| tuas)? (instruções|instrucoes|orientações|orientacoes|regras|ordens|diretrizes)( anteriores| acima| prévias| previas| do sistema| originais)`},
	{"pt: reveal the system prompt", `\b(revele|revela|mostre|mostra|exiba|imprima|repita|diga)( o| seu| o seu| teu)? (prompt|mensagem|instruções) do sistema`},
	{"pt: hide from the user", `\bnão (conte|diga|informe|mencione|avise|fale)( nada)?( isso)? (ao|para o) usuário|\bnao (conte|diga|informe) (nada )?(ao|para o) usuario`},
	{"pt: you are now", `\bagora (você é|voce e|és|tu és) (um|uma)? ?[^.,]{0,30}(sem (restrições|restricoes|filtros|limites|regras))`},
	{"pt: new instructions", `\bnovas (instruções|instrucoes|ordens|regras|diretrizes) (do|da|dos) (desenvolvedor|desenvolvedores|administrador|sistema|criador)`},
	// Forgetting what was said, refusing to follow it, obeying only this.
	{"es: forget what was said", `\b(olvida|olvide|ignora|ignore) (todo )?lo que (se te dijo|te dijeron|te han dicho|se dijo) (antes|anteriormente)|\bno (sigas|siga|obedezcas|obedezca) (las )?(instrucciones|reglas|indicaciones) (anteriores|previas|del sistema)|\b(obedece|obedezca|sigue) (solo|solamente|únicamente) (este|esta|estas) (texto|nota|instrucciones)`},
	{"fr: forget what was said", `\b(oublie|oubliez|ignore|ignorez) (tout )?ce qu'on (t'a|vous a) dit|\bne (suis|suivez|respecte|respectez) (pas|plus) les (instructions|consignes|règles) (précédentes|antérieures|du système)|\b(obéis|obéissez) (seulement|uniquement) (à )?(ce|cette|ces) (texte|note|instructions)`},
	{"de: forget what was said", `\b(vergiss|vergessen sie|ignoriere|ignorieren sie),? was (dir |ihnen )?(vorher|zuvor|bisher) gesagt wurde|\bbefolge (die )?(vorherigen|bisherigen|obigen) (anweisungen|regeln) nicht|\bgehorche nur (diesem|dieser|diesen) (text|notiz|anweisungen)`},
	{"ru: forget what was said", `(забудь|забудьте|игнорируй|игнорируйте) (всё|все),? что (тебе |вам )?(говорили|сказали|было сказано) (раньше|ранее|до этого)|не (следуй|следуйте|подчиняйся|подчиняйтесь) (предыдущим|прежним|системным) (инструкциям|указаниям|правилам)|(подчиняйся|слушайся) только (этому|этой|этим)`},
	{"pt: forget what was said", `\b(esqueça|esqueca|ignore|desconsidere) (tudo )?o que (foi dito|te disseram|lhe disseram|você ouviu) (antes|anteriormente)|\bnão (siga|obedeça|obedeca) (as )?(instruções|instrucoes|regras) (anteriores|prévias|do sistema)|\b(obedece|obedeça|obedeca|siga) (somente|apenas|só) (a )?(este|esta|estas) (texto|nota|instruções)`},
	{"it: do not follow", `\bnon (seguire|rispettare|obbedire a|seguite) (le )?(istruzioni|regole|direttive) (precedenti|di sistema|sopra)`},
	{"zh: do not follow", `(不要|别|不再|无需)(再)?(遵循|遵守|听从|服从|执行)(之前|以前|先前|上面|原来|系统)的?(指令|指示|规则|设定|要求)|只(听从|服从|遵守|遵循)(这段|这条|本条|这些)(文字|指令|说明|内容)|忽略系统(设定|提示|指令)`},
	{"ja: do not follow", `(前|以前|これまで|上記)の(指示|命令|ルール)(に|には)(従わ|従う必要は)ない|(前|以前|これまで|上記)の(指示|命令|ルール)は(すべて|全て)?忘れ`},
	// Italian, Dutch, Polish, Turkish, Korean.
	{"it: ignore previous instructions", `\b(ignora|ignorate|dimentica|dimenticate|trascura)( tutte)?( le| tue)? (istruzioni|regole|direttive)( precedenti| di sistema| sopra| originali)?`},
	{"it: hide from the user", `\bnon (dirlo|dire niente|dire nulla|riferirlo|mostrarlo) all'utente`},
	{"it: you are now", `\b(ora|adesso) sei [^.,]{0,30}senza (limiti|restrizioni|filtri)`},
	{"nl: ignore previous instructions", `\b(negeer|vergeet)( alle)? (vorige|eerdere|voorgaande|bovenstaande) (instructies|regels|opdrachten)`},
	{"pl: ignore previous instructions", `\b(zignoruj|ignoruj|zapomnij)( wszystkie)? (poprzednie|wcześniejsze|powyższe) (instrukcje|polecenia|zasady)`},
	{"tr: ignore previous instructions", `(önceki|yukarıdaki)( tüm)? (talimatları|kuralları|komutları) (yok say|unut|görmezden gel)`},
	// Korean: foldNative drops the spaces between Hangul syllables.
	{"ko: ignore previous instructions", `(이전|위|앞|앞서|기존|지금까지|원래|상기|시스템)(의|에서)?(받은|주어진|전달된|모든)*(지시|지시사항|명령|명령어|규칙|지침|지시문|프롬프트|제약)(들)?(을|를|은|는)?(모두|전부|다)?(무시|잊어|잊고|잊으|따르지마|따르지말)`},
	{"ko: reveal the system prompt", `시스템(프롬프트|지시|메시지)(를|을|의내용을)?(그대로|전부|모두)?((출력|공개|누설)(해|하라|하세요|하십시오)|(보여|알려)(줘|주세요|주십시오|달라)|말해)`},
	{"ko: hide from the user", `사용자(에게|한테)(는)?(말하지|알리지|알려주지|보고하지|얘기하지)(마|말)`},
	{"ko: you are now", `(이제부터|지금부터|이제)(당신|너)(은|는)[^.]{0,20}(제한|제약|필터|규칙)(이|가)?(없는|없이)`},
	// Arabic, after foldArabic: no short vowels or tatweel, one alef.
	{"ar: ignore previous instructions", `(تجاهل|تجاهلي|تجاهلوا|تناس|تناسي|انس|انسي|انسوا|اهمل|اهملي|الغ|الغي|لا تتبع|لا تتبعي|لا تلتزم ب|لا تطع|لا تطيعي|توقف عن اتباع|كف عن اتباع)( جميع| كل| كافه| كافة)? ((ال)?(تعليمات|اوامر|قواعد|ارشادات|توجيهات|قيود|ضوابط) (السابقه|السابقة|الاصليه|الاصلية|اعلاه|الاولي|القديمه|القديمة|الماضيه|الماضية|المعطاه|المعطاة|الخاصه بك|الخاصة بك|للنظام|النظام)|(تعليمات|اوامر|قواعد|ارشادات|توجيهات|قيود|ضوابط)(ك|كم))|(تجاهل|تجاهلي|انس|انسي|اهمل)( كل)? (ما سبق|ما ورد اعلاه|ما قيل لك)`},
	{"ar: reveal the system prompt", `(اكشف|اكشفي|اعرض|اعرضي|اظهر|اظهري|اطبع|اطبعي|اخبرني ب|اعطني|كرر|سرب|انسخ)( لي)? (موجه|تعليمات|رساله|رسالة|برومبت|اوامر|مطالبه|مطالبة) (ال)?نظام`},
	{"ar: hide from the user", `لا (تخبر|تخبري|تبلغ|تبلغي|تعلم|تقل|تقولي|تذكر|تذكري)( ذلك| هذا| بذلك| بهذا)? (ال)?مستخدم`},
	{"ar: you are now", `(انت|انتي) الان [^.،]{0,30}(بلا|بدون|دون) (قيود|حدود|قواعد|فلاتر|رقابه|رقابة)`},
}

type nativeRule struct {
	name string
	re   *regexp.Regexp
}

// nativeSet is the native rules compiled one by one and, per script, as
// one alternation, which screens a text in a single pass for each script
// the text is written in; the single rules only name the one that
// matched.
type nativeSet struct {
	any   [numScripts]*regexp.Regexp
	rules [numScripts][]nativeRule
}

// script is the writing system a native rule is written in.
type script int

const (
	scriptLatin script = iota
	scriptCyrillic
	scriptHanKana
	scriptHangul
	scriptArabic
	numScripts
)

// scriptOfRule is the script of a rule's language, the prefix of its name.
func scriptOfRule(name string) script {
	switch lang, _, _ := strings.Cut(name, ":"); lang {
	case "ru":
		return scriptCyrillic
	case "zh", "ja":
		return scriptHanKana
	case "ko":
		return scriptHangul
	case "ar":
		return scriptArabic
	}
	return scriptLatin
}

// scriptsOf reports which scripts t has letters of.
func scriptsOf(t string) (in [numScripts]bool) {
	for _, r := range t {
		switch {
		case r < 0x80:
			in[scriptLatin] = in[scriptLatin] || r >= 'a' && r <= 'z'
		case unicode.Is(unicode.Latin, r):
			in[scriptLatin] = true
		case unicode.Is(unicode.Cyrillic, r):
			in[scriptCyrillic] = true
		case unicode.Is(unicode.Hangul, r):
			in[scriptHangul] = true
		case isCJK(r):
			in[scriptHanKana] = true
		case unicode.Is(unicode.Arabic, r):
			in[scriptArabic] = true
		}
	}
	return in
}

func compileNative() nativeSet {
	var out nativeSet
	var alts [numScripts][]string
	for _, r := range nativeRules {
		sc := scriptOfRule(r.name)
		out.rules[sc] = append(out.rules[sc], nativeRule{name: r.name, re: regexp.MustCompile(r.expr)})
		alts[sc] = append(alts[sc], "(?:"+r.expr+")")
	}
	for sc, a := range alts {
		if len(a) > 0 {
			out.any[sc] = regexp.MustCompile(strings.Join(a, "|"))
		}
	}
	return out
}

// match returns the name of the first native rule, of a script t is
// written in, that matches t other than in quotes: «تجاهل تعليماتك»
// quotes an injection, as a page about them does.
func (n *nativeSet) match(t string) (string, bool) {
	in := scriptsOf(t)
	for sc := range numScripts {
		if !in[sc] || n.any[sc] == nil || !n.any[sc].MatchString(t) {
			continue
		}
		for _, r := range n.rules[sc] {
			for _, m := range r.re.FindAllStringIndex(t, 16) {
				if !quoted(t[:m[0]]) {
					return r.name, true
				}
			}
		}
	}
	return "", false
}

// quoted reports whether before ends with an opening quotation mark.
func quoted(before string) bool {
	last, _ := utf8.DecodeLastRuneInString(strings.TrimRight(before, " "))
	return strings.ContainsRune(`"'«“‘„「『‹`, last)
}

// foldNative normalizes text for the native rules: NFKC (full-width and
// compatibility forms), format characters (zero-width spaces and joiners,
// bidi controls, Unicode tags) dropped, lower case, white space runs
// collapsed to one space. Scripts are kept.
func foldNative(text string) string {
	t := norm.NFKC.String(text)
	var b strings.Builder
	b.Grow(len(t))
	space := false
	for _, r := range t {
		if unicode.Is(unicode.Cf, r) || r >= 0xE0000 && r <= 0xE007F {
			continue
		}
		if r >= 0x0600 && r <= 0x06FF {
			if r = foldArabic(r); r == 0 {
				continue
			}
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			// Spaces between CJK characters are padding, not word breaks.
			last, _ := utf8.DecodeLastRuneInString(b.String())
			if !(isCJK(last) && isCJK(r)) {
				b.WriteByte(' ')
			}
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// foldArabic drops Arabic short vowels and tatweel (0) and writes every
// alef as a bare alef and alef maqsura as ya, as people type them.
func foldArabic(r rune) rune {
	switch {
	case r >= 0x064B && r <= 0x065F, r == 0x0670, r == 0x0640:
		return 0
	case r == 'أ', r == 'إ', r == 'آ', r == 'ٱ':
		return 'ا'
	case r == 'ى':
		return 'ي'
	}
	return r
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// mentionBeforeRE and mentionAfterRE recognize text that names an
// injection instead of making one: "tells the model to ignore previous
// instructions", "phrases like 'ignore the above'", "<system> tags".
var (
	mentionBeforeRE = regexp.MustCompile(`(\b(tells?|telling|told|asks?|asking|asked|instructs?|instructing|tricks?|tricking|makes?|making|gets?|getting|convinces?|convincing|forces?|forcing) (the |a |an |your )?(model|agent|llm|assistant|ai|bot|chatbot)s? (to|into)|\b(like|such as|e g|phrases?|payloads?|strings?|patterns?|sentences?|text) ?[:]?|["“‘'«])[\s"“‘'«*_]*$`)
	mentionAfterRE  = regexp.MustCompile(`^[\s"”’'»*_]*(tags?|elements?|tokens?|markers?|delimiters?)\b`)
)

// mentionOnly reports whether every match of re in the folded text t
// mentions an injection rather than making one.
func mentionOnly(re *regexp.Regexp, t string) bool {
	all := re.FindAllStringIndex(t, 16)
	if len(all) == 0 {
		return false
	}
	for _, m := range all {
		lo := m[0]
		for n := 0; lo > 0 && n < 80 && t[lo-1] != '\n'; n++ {
			lo--
		}
		if !mentionBeforeRE.MatchString(t[lo:m[0]]) && !mentionAfterRE.MatchString(t[m[1]:min(len(t), m[1]+24)]) {
			return false
		}
	}
	return true
}

// maxDecodeDepth bounds how often decoded text is decoded again.
const maxDecodeDepth = 2

// decodedViews returns the texts hidden in text by an obvious encoding:
// Unicode tag characters (invisible ASCII), runs of base64 or hex, percent-
// and HTML-escaping. Each view is screened like the text itself.
func decodedViews(text string) []string {
	var out []string
	// Unicode tags U+E0020–U+E007E spell ASCII invisibly.
	if strings.ContainsRune(text, 0xE0041) || hasTags(text) {
		var b strings.Builder
		for _, r := range text {
			if r >= 0xE0020 && r <= 0xE007E {
				b.WriteRune(r - 0xE0000)
			} else if r >= 0xE0000 && r <= 0xE007F {
				continue
			} else {
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	if strings.Contains(text, "%") {
		if u, err := url.QueryUnescape(strings.ReplaceAll(text, "+", "%2B")); err == nil && u != text {
			out = append(out, u)
		} else if u := percentDecodeLoose(text); u != text {
			out = append(out, u)
		}
	}
	if strings.Contains(text, "&") {
		if u := html.UnescapeString(text); u != text {
			out = append(out, u)
		}
	}
	for _, m := range base64RE.FindAllString(text, 32) {
		if d, ok := decodeBase64Text(m); ok {
			out = append(out, d)
		}
	}
	for _, m := range hexRE.FindAllString(text, 32) {
		if d, ok := decodeHexText(m); ok {
			out = append(out, d)
		}
	}
	return out
}

func hasTags(s string) bool {
	for _, r := range s {
		if r >= 0xE0000 && r <= 0xE007F {
			return true
		}
	}
	return false
}

// percentDecodeLoose decodes the valid %XX escapes of s and keeps the rest.
func percentDecodeLoose(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// base64RE finds runs that may be base64 (standard or URL-safe) of at
// least 12 bytes of text.
var base64RE = regexp.MustCompile(`[A-Za-z0-9+/_\-]{16,}={0,2}`)

// decodeBase64Text decodes a base64 run and accepts it when it decodes to
// text (see readable).
func decodeBase64Text(m string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if d, err := enc.DecodeString(m); err == nil {
			if s, ok := readable(d); ok {
				return s, true
			}
		}
	}
	return "", false
}

// readable accepts decoded bytes that are text: valid UTF-8, mostly
// printable, with a space (or beyond ASCII). The bytes of a hash, a key or
// an image are not.
func readable(d []byte) (string, bool) {
	if !utf8.Valid(d) {
		return "", false
	}
	s := string(d)
	printable, n := 0, 0
	for _, r := range s {
		n++
		if unicode.IsPrint(r) || r == '\n' || r == '\t' {
			printable++
		}
	}
	return s, n > 0 && printable*10 >= n*9 && (strings.ContainsRune(s, ' ') || !isASCII(s))
}

// hexRE finds hex-encoded bytes: a run of hex digit pairs, \x escapes, or
// bytes written apart (0x69 0x67 ..., 69:67:...).
var (
	hexRE      = regexp.MustCompile(`(?i)\b(?:[0-9a-f]{2}){8,}\b|(?:\\x[0-9a-f]{2}){4,}|(?:\b(?:0x)?[0-9a-f]{2}[\s,:]{1,3}){7,}(?:0x)?[0-9a-f]{2}\b`)
	hexNoiseRE = regexp.MustCompile(`(?i)0x|\\x|[\s,:]`)
)

// decodeHexText decodes a hex run and accepts it when it decodes to text.
func decodeHexText(m string) (string, bool) {
	d, err := hex.DecodeString(hexNoiseRE.ReplaceAllString(m, ""))
	if err != nil {
		return "", false
	}
	return readable(d)
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// leetMap maps the digits and symbols of leetspeak to letters.
var leetMap = map[rune]rune{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '@': 'a', '$': 's', '!': 'i', '|': 'l'}

// unleet returns the lines of text that hold leetspeak, rewritten with
// letters (see unleetLine), and reports whether there were any. Lines
// without leetspeak are left out: the English rules already saw them.
func unleet(text string) (string, bool) {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if u, ok := unleetLine(line); ok {
			out = append(out, u)
		}
	}
	return strings.Join(out, "\n"), len(out) > 0
}

// unleetLine rewrites the words of text that mix letters with leetspeak
// digits or symbols (1gn0r3, 4ll, pr3v10us) with letters; other words are
// kept. A line needs at least two such words to count as leetspeak
// (version strings such as v2 or utf8 stand alone). It reports whether
// anything changed.
func unleetLine(text string) (string, bool) {
	n := 0
	changed := false
	words := strings.FieldsFunc(text, unicode.IsSpace)
	if len(words) == 0 {
		return text, false
	}
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		letters, leet := 0, 0
		for _, r := range w {
			if unicode.IsLetter(r) {
				letters++
			} else if _, ok := leetMap[r]; ok {
				leet++
			}
		}
		if leet == 0 || letters == 0 && len(w) > 1 && leet < len(w) {
			b.WriteString(w)
			continue
		}
		if letters == 0 && len(w) > 1 {
			b.WriteString(w)
			continue
		}
		changed = true
		n++
		for _, r := range w {
			if l, ok := leetMap[r]; ok && (r < 'a' || r > 'z') {
				b.WriteRune(l)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String(), changed && n >= 2
}

// spacedRunRE finds runs of single letters separated by one to three
// separators: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e".
var spacedRunRE = regexp.MustCompile(`(?:\pL[ .\-_*·,:/]{1,3}){4,}\pL`)

// despace returns the spaced-out runs of text, one a line, with their
// letters joined into words. Within a run
// the most common separator is the one inside words; any other marks a
// word break. It reports whether anything changed.
func despace(text string) (string, bool) {
	idx := spacedRunRE.FindAllStringIndex(text, -1)
	if idx == nil {
		return text, false
	}
	var b strings.Builder
	for _, m := range idx {
		b.WriteByte('\n')
		run := text[m[0]:m[1]]
		var letters []string
		var seps []string
		i := 0
		for i < len(run) {
			r, n := utf8.DecodeRuneInString(run[i:])
			if unicode.IsLetter(r) {
				letters = append(letters, string(r))
				i += n
				j := i
				for j < len(run) {
					r2, n2 := utf8.DecodeRuneInString(run[j:])
					if unicode.IsLetter(r2) {
						break
					}
					j += n2
				}
				if j > i {
					seps = append(seps, run[i:j])
				}
				i = j
				continue
			}
			i += n
		}
		count := map[string]int{}
		for _, s := range seps {
			count[s]++
		}
		intra, best := "", 0
		for s, c := range count {
			if c > best || c == best && len(s) < len(intra) {
				intra, best = s, c
			}
		}
		for k, l := range letters {
			b.WriteString(l)
			if k < len(seps) && k < len(letters)-1 && seps[k] != intra {
				b.WriteByte(' ')
			}
		}
	}
	return b.String(), true
}

// splitWordRE finds words cut into pieces by single hyphens, dots,
// underscores or middle dots: ig-nore, pre.vi.ous.
var splitWordRE = regexp.MustCompile(`\pL+(?:[-.·_]\pL+)+`)

// unsplit returns the lines of text that hold split words, with the pieces
// of each word joined, and reports whether there were any. A split that is
// spelling (follow-up, e.g.) joins into a word no rule names.
func unsplit(text string) (string, bool) {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if j := splitWordRE.ReplaceAllStringFunc(line, func(w string) string {
			return strings.Map(func(r rune) rune {
				if strings.ContainsRune("-.·_", r) {
					return -1
				}
				return r
			}, w)
		}); j != line {
			out = append(out, j)
		}
	}
	return strings.Join(out, "\n"), len(out) > 0
}

// rot13Words are common English words as rot13 writes them (the, and,
// you, your, all, is, of, it, for, are, not, with, this, that, do, me,
// ignore, previous, instructions, prompt, system).
var rot13Words = map[string]bool{"gur": true, "naq": true, "lbh": true, "lbhe": true, "nyy": true, "vf": true, "bs": true,
	"vg": true, "sbe": true, "ner": true, "abg": true, "jvgu": true, "guvf": true, "gung": true, "qb": true, "zr": true,
	"vtaber": true, "cerivbhf": true, "vafgehpgvbaf": true, "cebzcg": true, "flfgrz": true}

// unrot13 returns text with rot13 undone when at least two different
// words of it are common English words in rot13, and reports whether it
// did; ordinary text is not rot13 and is left alone.
func unrot13(text string) (string, bool) {
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }) {
		if w = strings.ToLower(w); rot13Words[w] {
			seen[w] = true
		}
	}
	if len(seen) < 2 {
		return text, false
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, text), true
}

// squeezedRules are the core English rules for letters with nothing
// between them, as despace joins "i g n o r e p r e v i o u s" when no
// wider gap marks where the words end. They only run on spaced-out runs:
// ordinary text that runs words together is not screened this way.
var squeezedRules = []struct {
	name string
	re   *regexp.Regexp
}{
	{"ignore previous instructions", regexp.MustCompile(`(ignore|disregard|forget|skip|discard|abandon)(all|any|of|the|your|these|those|my|every|above|system)*(previous|prior|above|earlier|preceding|original|initial|system|developer)(instruction|prompt|rule|direction|directive|guideline|message|context|command|guidance)`)},
	{"disregard your rules", regexp.MustCompile(`(ignore|disregard|forget|abandon|discard|drop)(all|of|the)*(your|safety|ethical)(own|previous|safety)?(instruction|rule|guideline|guardrail|restriction|programming|training|polic|filter)`)},
	{"reveal your system prompt", regexp.MustCompile(`(reveal|print|show|output|repeat|leak|display|dump|disclose|tellme|giveme|sendme)(me|us|the|full|entire|exact|complete)*(your)(full|entire|exact|complete|original|initial|hidden|secret|internal)*(systemprompt|prompt|instructions|systemmessage|rules|guidelines)`)},
	{"you are now unrestricted", regexp.MustCompile(`(youarenow|yourenow)(an?)?(dan|jailbroken|unrestricted|unfiltered|uncensored|evil|freefrom)`)},
	{"new instructions", regexp.MustCompile(`(new|updated|revised|real|actual|true|secret|hidden)(system)?(instructions|directives)from`)},
	{"hide from the user", regexp.MustCompile(`(donot|dont|never|mustnot)(tell|inform|letknow|let)(the|your)?(user|human|operator)`)},
	{"override your rules", regexp.MustCompile(`(override|bypass|circumvent|disable|turnoff|deactivate)(allof|anyof)?(your|the)(rules|instructions|safety|guardrails|guidelines|restrictions|filters|safeguards|systemprompt)`)},
}

// matchSqueezed runs squeezedRules over each line of despace's output,
// folded and without anything but letters.
func matchSqueezed(runs string) (string, bool) {
	for line := range strings.SplitSeq(runs, "\n") {
		t := strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) {
				return r
			}
			return -1
		}, foldScreen(line))
		for _, r := range squeezedRules {
			if r.re.MatchString(t) {
				return r.name, true
			}
		}
	}
	return "", false
}

// markdownImageRE finds Markdown and HTML images whose URL has a query.
var markdownImageRE = regexp.MustCompile(`!\[[^\]\n]{0,200}\]\(\s*<?(https?://[^)\s>]+)|<img\b[^>]{0,200}\bsrc\s*=\s*["']?(https?://[^"'\s>]+)`)

// exfilQueryRE marks a query that carries data rather than options: a
// template or placeholder, or a parameter named after what leaks.
var exfilQueryRE = regexp.MustCompile(`[{}<>\[\]$]|%7[bBdD]|%5[bBdD]|\b[A-Z][A-Z_]{3,}\b|(?i)\b(data|secret|secrets|token|tokens|key|keys|apikey|api_key|password|pass|pwd|history|conversation|chat|prompt|session|cookie|cookies|creds?|credentials?|env|message|messages|input|summary|leak|exfil|payload|q|d|c|x)=`)

// exfiltratingImage reports whether text holds an image whose URL sends
// data out: a query with a placeholder or a data-bearing parameter.
func exfiltratingImage(text string) bool {
	for _, m := range markdownImageRE.FindAllStringSubmatch(text, 16) {
		u := m[1] + m[2]
		q := strings.IndexAny(u, "?#")
		if q < 0 {
			continue
		}
		if exfilQueryRE.MatchString(u[q+1:]) {
			return true
		}
	}
	return false
}

// markdownLinkRE finds Markdown links (images are exfiltratingImage's) and
// their target, which may hold spaces inside a <placeholder>.
var markdownLinkRE = regexp.MustCompile(`(?:^|[^!\]])\[[^\]\n]{0,200}\]\(\s*(https?://[^)\n]{1,400})\)`)

// Data a link is asked to carry: a placeholder in the URL that names it,
// or words around the link asking to put it there.
var (
	linkSlotRE = regexp.MustCompile(`(?i)(\{\{?|<|\$\{|%7b|%3c)[^}>]{0,60}(chat|history|conversation|messages?|prompt|secret|token|key|password|passwd|creds?|credential|env|cookie|session|summary|user|context|memory|memories|ssh|aws)[^}>]{0,60}(\}\}?|>|%7d|%3e)`)
	linkFillRE = regexp.MustCompile(`(?i)\b(append|add|put|include|insert|encode|embed|fill|attach|paste|place|substitute|base64|urlencode|url-encode)\w*\b`)
	linkDataRE = regexp.MustCompile(`(?i)\b(conversation|chat (history|log)|previous messages|messages so far|system prompt|secrets|credentials|api keys|access tokens|tokens|passwords|env vars|environment variables|cookies|(the )?user'?s( \w+)? (data|messages|files|keys?|tokens?|password|email|address|history|credentials|secrets)|user data|personal data|id_rsa)\b|(~|\$home)/\.\w`)
)

// exfiltratingLink reports whether text holds a Markdown link made to
// carry data out: its URL has a placeholder naming what to put in it, or
// has a query or fragment while the text near the link (the 200 bytes
// either side) asks to put the conversation, secrets or the user's data
// into it. Ordinary links (docs, searches, dashboards, even a reset link
// whose token= is elided) pass.
func exfiltratingLink(text string) bool {
	for _, m := range markdownLinkRE.FindAllStringSubmatchIndex(text, 16) {
		u := text[m[2]:m[3]]
		if linkSlotRE.MatchString(u) {
			return true
		}
		if !strings.ContainsAny(u, "?#") {
			continue
		}
		near := text[max(0, m[0]-200):min(len(text), m[1]+200)]
		if linkFillRE.MatchString(near) && linkDataRE.MatchString(near) {
			return true
		}
	}
	return false
}

// pipeToShellRE finds a download piped into a shell; covertRE a request to
// keep something from the user. Together they are an instruction to run
// remote code behind the user's back.
var (
	pipeToShellRE = regexp.MustCompile(`(?i)\b(curl|wget|iwr|invoke-webrequest|fetch)\b[^\n|]{0,300}\|\s*(sudo\s+)?(ba|z|k|da)?sh\b|(?i)\b(bash|sh)\s+<\(\s*(curl|wget)`)
	covertRE      = regexp.MustCompile(`(?i)\b(without (telling|asking|informing|notifying|alerting|showing|mentioning|confirming)|(do not|don'?t|never|no need to|not need to) (mention|tell|report|show|say|ask|inform|know)|silently|quietly|secretly|covertly|discreetly|behind (their|the user'?s) back|does not need to know|doesn'?t need to know)\b`)
)

// covertShell reports whether text asks to pipe a download into a shell
// and to hide it.
func covertShell(text string) bool {
	return pipeToShellRE.MatchString(text) && covertRE.MatchString(text)
}
