package verdict

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite codes.go from the catalogue")

// initialisms are the words a constant name spells in capitals.
var initialisms = map[string]string{"dns": "DNS", "tls": "TLS", "mtu": "MTU", "ca": "CA", "ip": "IP",
	"nsg": "NSG", "http": "HTTP", "toml": "TOML", "nxdomain": "NXDomain", "servfail": "ServFail", "id": "ID"}

// constName is the Go name of a code's constant: Code, then each word of
// the code in title case (dns.private-zone: CodeDNSPrivateZone).
func constName(code string) string {
	var b strings.Builder
	b.WriteString("Code")
	for _, w := range strings.FieldsFunc(code, func(r rune) bool { return r == '.' || r == '-' || r == '_' }) {
		if s, ok := initialisms[w]; ok {
			b.WriteString(s)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// codesFile renders codes.go: one constant per cause and warning code.
func codesFile() []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated from the catalogue by `go test ./internal/verdict -run TestCodesFile -update`; DO NOT EDIT.\n\n")
	b.WriteString("package verdict\n\n")
	b.WriteString("// The cause codes, one constant per catalogue entry: use them rather than\n// literals, so that a typo does not compile.\nconst (\n")
	for _, c := range Causes() {
		fmt.Fprintf(&b, "\t%s = %q\n", constName(c.Code), c.Code)
	}
	b.WriteString(")\n\n// The warning codes (Kind KindWarning).\nconst (\n")
	for _, c := range Warnings() {
		fmt.Fprintf(&b, "\t%s = %q\n", constName(c.Code), c.Code)
	}
	b.WriteString(")\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		panic(err)
	}
	return out
}

// TestCodesFile fails when codes.go drifts from the catalogue (a code
// registered or removed without regenerating), and when two codes would
// share a constant name.
func TestCodesFile(t *testing.T) {
	names := map[string]string{}
	for _, c := range append(Causes(), Warnings()...) {
		n := constName(c.Code)
		if prev, ok := names[n]; ok {
			t.Errorf("codes %s and %s both become %s", prev, c.Code, n)
		}
		names[n] = c.Code
	}
	want := codesFile()
	if *update {
		if err := os.WriteFile("codes.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("codes.go")
	if err != nil {
		t.Fatalf("reading codes.go: %v (generate it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("codes.go is out of date with the catalogue: run `go test ./internal/verdict -run TestCodesFile -update` (or make docs)")
	}
}
