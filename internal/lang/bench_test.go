package lang

import (
	"strings"
	"testing"
)

// BenchmarkText measures the language of an 8 KB page, as a query replica
// tells it for every docs page it loads.
func BenchmarkText(b *testing.B) {
	for name, para := range map[string]string{
		"en": "To configure the gateway, open the settings file and set the token. When the gateway starts, it reads `gateway.json` and [the guide](https://example.com).\n",
		"zh": "要配置网关，请打开设置文件并设置令牌。网关启动时会读取 `gateway.json` 文件和[指南](https://example.com)。\n",
	} {
		text := strings.Repeat(para, 8<<10/len(para))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Text(text)
			}
		})
	}
}
