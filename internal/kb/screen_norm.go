package kb

import (
	"encoding/base64"
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
	{"ko: ignore previous instructions", `(이전|위의|기존)(의)? (모든 )?(지시|명령|규칙|지침)(을|를|은|는)? ?(모두 )?(무시|잊어)`},
	{"ko: reveal the system prompt", `시스템 프롬프트(를|을)? ?(그대로 )?(출력|보여|알려|공개)`},
}

type nativeRule struct {
	name string
	re   *regexp.Regexp
}

// nativeSet is the native rules compiled one by one and as one
// alternation, which screens a text in a single pass; the single rules
// only name the one that matched.
type nativeSet struct {
	any   *regexp.Regexp
	rules []nativeRule
}

func compileNative() nativeSet {
	out := nativeSet{rules: make([]nativeRule, len(nativeRules))}
	alts := make([]string, len(nativeRules))
	for i, r := range nativeRules {
		out.rules[i] = nativeRule{name: r.name, re: regexp.MustCompile(r.expr)}
		alts[i] = "(?:" + r.expr + ")"
	}
	out.any = regexp.MustCompile(strings.Join(alts, "|"))
	return out
}

// match returns the name of the first native rule that matches t.
func (n *nativeSet) match(t string) (string, bool) {
	if !n.any.MatchString(t) {
		return "", false
	}
	for _, r := range n.rules {
		if r.re.MatchString(t) {
			return r.name, true
		}
	}
	return "", false
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
// Unicode tag characters (invisible ASCII), runs of base64, percent- and
// HTML-escaping. Each view is screened like the text itself.
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
// text: valid UTF-8, mostly printable, with a space.
func decodeBase64Text(m string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		d, err := enc.DecodeString(m)
		if err != nil || !utf8.Valid(d) {
			continue
		}
		s := string(d)
		printable, n := 0, 0
		for _, r := range s {
			n++
			if unicode.IsPrint(r) || r == '\n' || r == '\t' {
				printable++
			}
		}
		if n > 0 && printable*10 >= n*9 && (strings.ContainsRune(s, ' ') || !isASCII(s)) {
			return s, true
		}
	}
	return "", false
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
