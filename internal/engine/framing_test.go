package engine

import (
	"slices"
	"testing"

	"github.com/knowhub/knowhub/internal/analysis"
)

func TestStripFraming(t *testing.T) {
	an := analysis.New()
	for _, tt := range []struct{ q, want string }{
		{"如何备份 OpenClaw 状态", "备份 openclaw open claw 状态"},
		{"怎么配置 Telegram 机器人？", "配置 telegram 机器 器人"},
		{"为什么网关启动失败呢", "网关 关启 启动 动失 失败"},
		{"呢绒和吗啡", "呢绒 绒和 和吗 吗啡"}, // not at a clause's end: kept
		{"网关的配置文件", "网关 配置 置文 文件"},
		{"how do I connect a Telegram bot", "connect telegram bot"},
	} {
		got := an.QueryTerms(stripFraming(tt.q))
		if want := an.QueryTerms(tt.want); !slices.Equal(got, want) {
			t.Errorf("%q: terms %q, want %q", tt.q, got, want)
		}
	}
}
