package transcript

import (
	"strings"
	"testing"
)

// TestSanitizeStrictPIILocales plants personal data written the way people
// write it in several locales; strict mode must replace every item and keep
// the technical numbers around them.
func TestSanitizeStrictPIILocales(t *testing.T) {
	san := newTestSanitizer(t)
	phones := []string{
		// North America, spaces and dots as well as dashes.
		"555 345 6789", "(555) 345 6789", "555.345.6789", "1-555-345-6789", "+1 (555) 345-6789",
		// China: mobiles bare, grouped and international.
		"13812345678", "138 1234 5678", "139-1234-5678", "+86 138 1234 5678", "+86-13812345678", "0086 138 1234 5678", "010-8888 6666",
		// United Kingdom, Germany, France, Spain, Italy, Netherlands.
		"020 7946 0958", "07700 900123", "0044 20 7946 0958", "030 12345678", "0170 1234567", "+49 (0)30 1234567", "030/1234567",
		"01 23 45 67 89", "06.12.34.56.78", "0612345678", "+33 6 12 34 56 78", "612 34 56 78", "+34 612 345 678", "+39 06 6982 1234", "06-12345678",
		// Japan, India, Brazil, Russia, Australia.
		"03-1234-5678", "090-1234-5678", "+81 90-1234-5678", "98765 43210", "+91 98765 43210", "(11) 91234-5678", "+55 11 91234-5678",
		"8 (495) 123-45-67", "+7 (495) 123-45-67", "8 912 345-67-89", "0412 345 678", "(02) 9876 5432", "+61 412 345 678",
	}
	labels := []string{"call me on %s today", "Tel.: %s", "手机：%s", "電話番号 %s まで", "Telefon: %s.", "téléphone : %s", "teléfono %s,", "телефон %s", "whatsapp %s"}
	for i, p := range phones {
		in := strings.Replace(labels[i%len(labels)], "%s", p, 1)
		got := san.Text(in, Strict)
		if strings.Contains(got, p) || !strings.Contains(got, PhonePlaceholder) {
			t.Errorf("phone %q: Text(%q) = %q", p, in, got)
		}
	}
	ips := []string{"2001:db8::1", "fe80::1ff:fe23:4567:890a", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "2a00:1450:4001:82a::200e"}
	for _, ip := range ips {
		for _, in := range []string{"the host is " + ip + ".", "ip:" + ip, "addr=" + ip + ";", "「" + ip + "」"} {
			if got := san.Text(in, Strict); strings.Contains(got, ip) || !strings.Contains(got, IPPlaceholder) {
				t.Errorf("ipv6 %q: Text(%q) = %q", ip, in, got)
			}
		}
	}
	// Numbers that are not personal data stay as they are.
	kept := []string{
		"order 1234567890", "1733097600", "1733097600123", "2026-03-02 10:42:13", "05.11.2026", "1 000 000 rows", "12 345 678 bytes",
		"port 44222", "v1.2.3.4", "0.12.345", "took 125 ms, 340 ms, 4000 ms", "SHA 3f2a9c81", "id 8f14e45f-ceea-467f-a0e6-5b3f1a4d9c21",
		"@@ -12,7 +12,8 @@", "1,000,000", "pid 4242 and 4343", "2026.7.1", "std::vector", "a::b::c", "10:42:13", "18446744073709551615",
		"GOMAXPROCS=2 GOGC=100", "0x7fffffff", "build 20260302 1042", "ISBN 978-3-16-148410-0",
	}
	for _, in := range kept {
		if got := san.Text(in, Strict); got != in {
			t.Errorf("Text(%q) = %q, want it kept", in, got)
		}
	}
}

// TestTranscriptSubmitterSanitized checks that a submitter's e-mail (or
// other personal data) is not kept in a strict transcript, its id or the
// entries extracted from it.
func TestTranscriptSubmitterSanitized(t *testing.T) {
	san := newTestSanitizer(t)
	tr := personalTranscript()
	tr.SubmittedBy = "alice.smith@example.com"
	tr.SessionKey = "agent:main:whatsapp:+14155550134"
	got := san.Transcript(tr, Strict)
	if strings.Contains(got.SubmittedBy, "alice.smith") || strings.Contains(got.SessionKey, "4155550134") {
		t.Errorf("attribution keeps personal data: submitted_by %q, session_key %q", got.SubmittedBy, got.SessionKey)
	}
	if got.SubmittedBy == "" || got.SessionKey == "" {
		t.Errorf("attribution lost: %+v", got)
	}
	if other := san.Transcript(personalTranscript(), Strict); got.AgentID != other.AgentID {
		t.Errorf("agent id changed: %q", got.AgentID)
	}
	if r := san.Transcript(tr, Relaxed); r.SubmittedBy != tr.SubmittedBy {
		t.Errorf("relaxed changed submitted_by to %q", r.SubmittedBy)
	}
}
