package api

import "testing"

// The guard answers localhost, every IP address and the configured names,
// in any case and with or without a port or a trailing dot, and nothing
// else.
func TestBrowserGuardHosts(t *testing.T) {
	g := newBrowserGuard([]string{"knowhub.internal", "KB.Example.com."})
	for host, want := range map[string]bool{
		"localhost":               true,
		"LOCALHOST:7700":          true,
		"localhost.:7700":         true,
		"127.0.0.1:7700":          true,
		"[::1]:7700":              true,
		"[::1]":                   true,
		"10.1.2.3":                true,
		"[fe80::1%25eth0]:7700":   true,
		"knowhub.internal:7700":   true,
		"kb.example.com":          true,
		"":                        false,
		"evil.example:7700":       false,
		"localhost.evil.example":  false,
		"knowhub.internal.evil":   false,
		"127.0.0.1.nip.io:7700":   false,
		"0x7f000001:7700":         false,
		"sub.knowhub.internal":    false,
		"knowhub.internal:7700:1": false,
	} {
		if _, got := g.knownHost(host); got != want {
			t.Errorf("Host %q answered: %v, want %v", host, got, want)
		}
	}
}

func TestCheckJSONType(t *testing.T) {
	for ct, ok := range map[string]bool{
		"application/json":                  true,
		"Application/JSON; charset=UTF-8":   true,
		"application/json;charset=utf-8":    true,
		"":                                  false,
		"text/plain":                        false,
		"text/plain; charset=utf-8":         false,
		"application/x-www-form-urlencoded": false,
		"multipart/form-data; boundary=x":   false,
		"application/json; charset=latin1":  false,
		"application/jsonp":                 false,
	} {
		if err := checkJSONType(ct); (err == nil) != ok {
			t.Errorf("Content-Type %q: %v, want accepted %v", ct, err, ok)
		}
	}
}
