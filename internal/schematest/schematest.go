// Package schematest validates real command output against the JSON Schemas
// of schema/ for the tests of every command package.
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/schema"
)

var (
	schemasOnce sync.Once
	schemas     map[string]*jsonschema.Schema
	schemasErr  error
)

// Compile compiles every schema in schema.FS, asserting formats
// (date-time).
func Compile() (map[string]*jsonschema.Schema, error) {
	schemasOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		names, err := fs.Glob(schema.FS, "*.schema.json")
		if err != nil {
			schemasErr = err
			return
		}
		for _, n := range names {
			b, err := fs.ReadFile(schema.FS, n)
			if err != nil {
				schemasErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				schemasErr = fmt.Errorf("%s: %w", n, err)
				return
			}
			if err := c.AddResource(schema.Base+n, doc); err != nil {
				schemasErr = fmt.Errorf("%s: %w", n, err)
				return
			}
		}
		schemas = map[string]*jsonschema.Schema{}
		for kind, n := range schema.Files {
			s, err := c.Compile(schema.Base + n)
			if err != nil {
				schemasErr = fmt.Errorf("compiling %s: %w", n, err)
				return
			}
			schemas[kind] = s
		}
	})
	return schemas, schemasErr
}

// Validate checks that out is exactly one JSON document of kind and
// that it validates against kind's schema.
func Validate(t testing.TB, kind, out string) {
	t.Helper()
	if strings.Contains(out, "null") {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(strings.TrimRight(line, ","), ": null") {
				t.Errorf("%s holds a null: %s", kind, line)
			}
		}
	}
	if err := Check(kind, out); err != nil {
		t.Errorf("%v\n--- output:\n%.2000s", err, out)
	}
}

// Check returns why out is not one JSON document of kind valid against
// kind's schema, or nil. Tests that a drifted document fails use it.
func Check(kind, out string) error {
	ss, err := Compile()
	if err != nil {
		return fmt.Errorf("schemas: %w", err)
	}
	s, ok := ss[kind]
	if !ok {
		return fmt.Errorf("no schema for kind %s", kind)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		return fmt.Errorf("%s is not one JSON document: %w", kind, err)
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("%s does not validate against %s:\n%v", kind, schema.Files[kind], err)
	}
	return nil
}

// SameDocument checks that yamlOut (-o yaml) is the document jsonOut
// (-o json) is, member for member.
func SameDocument(t testing.TB, jsonOut, yamlOut string) {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(yamlOut))
	if err != nil {
		t.Fatalf("-o yaml is not YAML: %v\n%.400s", err, yamlOut)
	}
	var a, b any
	if err := json.Unmarshal([]byte(jsonOut), &a); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%.400s", err, jsonOut)
	}
	if err := json.Unmarshal(j, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("-o yaml is another document than -o json:\n--- json\n%.1500s\n--- yaml\n%.1500s", jsonOut, yamlOut)
	}
}

// Edit is one change to a valid document that its schema must reject: the
// first Old in it becomes New (a field renamed, removed, nulled, retyped).
type Edit struct {
	Name, Old, New string
}

// RejectsEdits checks that each edit of out, a valid document of kind,
// fails validation, so that a field renamed or removed fails a test.
func RejectsEdits(t testing.TB, kind, out string, edits ...Edit) {
	t.Helper()
	if err := Check(kind, out); err != nil {
		t.Fatalf("the document to edit is not valid: %v", err)
	}
	for _, e := range edits {
		if !strings.Contains(out, e.Old) {
			t.Errorf("%s: %q is not in the document", e.Name, e.Old)
			continue
		}
		if err := Check(kind, strings.Replace(out, e.Old, e.New, 1)); err == nil {
			t.Errorf("%s %s (%q → %q) still validates", kind, e.Name, e.Old, e.New)
		}
	}
}
