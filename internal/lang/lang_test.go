package lang

import "testing"

func TestFolder(t *testing.T) {
	for p, want := range map[string]string{
		"docs/zh-CN/gateway/config.md": "zh",
		"zh-TW/start.md":               "zh",
		"docs/ja/index.md":             "ja",
		"i18n/pt_BR/guide.md":          "pt",
		"translations/fr/faq.md":       "fr",
		"locales/zh-Hans/faq.md":       "zh",
		"docs/es-419/faq.md":           "es",
		"en/guide.md":                  "en",
		"docs/gateway/config.md":       "",
		"README.fr.md":                 "", // a file name alone says nothing
		"fr.md":                        "",
		"docs/api/guide.md":            "", // not a locale
		"docs/fr-tools/x.md":           "",
		"docs/xx/guide.md":             "",
	} {
		if got := Folder(p); got != want {
			t.Errorf("Folder(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestText(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"To configure the gateway, open the settings file and set the token. When the gateway starts, it reads the file.", "en"},
		{"Pour configurer la passerelle, ouvrez le fichier de configuration et définissez le jeton. Lorsque la passerelle démarre, elle lit le fichier.", "fr"},
		{"Per configurare il gateway, apri il file delle impostazioni e imposta il token. Quando il gateway si avvia, legge il file della configurazione.", "it"},
		{"Para configurar o gateway, abra o arquivo de configuração e defina o token. Quando o gateway inicia, ele lê o arquivo da configuração e não pode ser alterado.", "pt"},
		{"Um das Gateway zu konfigurieren, öffnen Sie die Datei und setzen Sie das Token. Wenn das Gateway startet, liest es die Datei mit den Einstellungen.", "de"},
		{"要配置网关，请打开设置文件并设置令牌。网关启动时会读取 `gateway.json` 文件。", "zh"},
		{"ゲートウェイを設定するには、設定ファイルを開いてトークンを設定します。", "ja"},
		{"게이트웨이를 구성하려면 설정 파일을 열고 토큰을 설정하세요.", "ko"},
		{"لتكوين البوابة، افتح ملف الإعدادات وقم بتعيين الرمز المميز.", "ar"},
		{"برای پیکربندی درگاه، فایل تنظیمات را باز کنید و توکن را تنظیم کنید.", "fa"},
		{"Чтобы настроить шлюз, откройте файл настроек и задайте токен.", "ru"},
		{"Щоб налаштувати шлюз, відкрийте файл налаштувань і встановіть токен. Його ім'я є у файлі.", "uk"},
		{"गेटवे को कॉन्फ़िगर करने के लिए सेटिंग्स फ़ाइल खोलें।", "hi"},
		{"เปิดไฟล์การตั้งค่าและตั้งค่าโทเค็น", "th"},
		// Code and links in Latin letters do not outweigh the prose.
		{"运行 `openclaw gateway --port 18789 --verbose` 启动网关，参见[配置](/zh-CN/gateway/configuration)。\n```sh\nopenclaw gateway status --deep --json\n```\n", "zh"},
		// Too little to tell.
		{"Gateway", ""},
		{"```sh\nopenclaw gateway status\n```", ""},
	} {
		if got := Text(c.text); got != c.want {
			t.Errorf("Text(%.40q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestPage(t *testing.T) {
	// The folder wins over the text, as in the doc-engine plugin: an
	// untranslated page of a locale folder is that locale's page.
	if got := Page("docs/fr/start.md", "Start the gateway and open the dashboard when it is ready."); got != "fr" {
		t.Errorf("Page in fr/ = %q, want fr", got)
	}
	if got := Page("docs/start.md", "要配置网关，请打开设置文件并设置令牌。"); got != "zh" {
		t.Errorf("Page with Chinese text = %q, want zh", got)
	}
}

func TestQuery(t *testing.T) {
	for q, want := range map[string]string{
		"how do I configure the gateway token":         "en",
		"what is the default port of the gateway":      "en",
		"comment configurer le jeton de la passerelle": "fr",
		"如何配置网关令牌":                                     "zh",
		"ゲートウェイのトークンを設定する方法":                           "ja",
		"كيف أقوم بتكوين البوابة":                      "ar",
		// Keywords alone, or one function word, set no preference.
		"gateway token":     "",
		"configure gateway": "",
		"the gateway":       "",
		"":                  "",
	} {
		if got := Query(q); got != want {
			t.Errorf("Query(%q) = %q, want %q", q, got, want)
		}
	}
}

func FuzzText(f *testing.F) {
	f.Add("To configure the gateway, open the file.")
	f.Add("要配置网关，`code` [link](/x) <b>")
	f.Add("```\nunterminated")
	f.Fuzz(func(t *testing.T, s string) {
		_ = Text(s)
		_ = Query(s)
		_ = Folder(s)
	})
}
