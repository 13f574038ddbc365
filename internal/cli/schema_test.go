package cli

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pullpath/pullpath/internal/schematest"
)

// validateDoc checks that out is exactly one JSON document of kind that
// validates against kind's schema (schematest.Validate).
func validateDoc(t *testing.T, kind, out string) {
	t.Helper()
	schematest.Validate(t, kind, out)
}

func compileSchemas() (map[string]*jsonschema.Schema, error) { return schematest.Compile() }

// TestSchemasRejectDrift checks that the schemas bite: a document with a
// renamed field, a removed required field or a Go field name fails.
func TestSchemasRejectDrift(t *testing.T) {
	ss, err := compileSchemas()
	if err != nil {
		t.Fatal(err)
	}
	good := `{"apiVersion":"pullpath.dev/v1alpha1","kind":"ExplainReport","input":{"lines":1,"bytes":10,"skipped_lines":0},
"findings":[{"verdict":{"ok":false,"layer":"dns","cause":"dns.nxdomain","summary":"s","next":[]},"count":1,"image":"","host":"h","runtime":"","ambiguous":[],"source":"text","message":"m"}]}`
	for _, tt := range []struct {
		name, doc string
		valid     bool
	}{
		{"good", good, true},
		{"renamed field", strings.Replace(good, `"count"`, `"Count"`, 1), false},
		{"removed field", strings.Replace(good, `"host":"h",`, ``, 1), false},
		{"ok verdict without cause ok", strings.Replace(good, `"ok":false,"layer":"dns","cause":"dns.nxdomain"`, `"ok":true,"layer":"none","cause":"dns.nxdomain"`, 1), false},
		{"null list", strings.Replace(good, `"ambiguous":[]`, `"ambiguous":null`, 1), false},
		{"wrong apiVersion", strings.Replace(good, "v1alpha1", "v1", 1), false},
		{"wrong kind", strings.Replace(good, `"ExplainReport"`, `"ProbeReport"`, 1), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			err = ss["ExplainReport"].Validate(doc)
			if (err == nil) != tt.valid {
				t.Errorf("Validate(%s) = %v, want valid %v", tt.name, err, tt.valid)
			}
		})
	}
}
