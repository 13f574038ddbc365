package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/verdict"
)

// APIVersion is the apiVersion of every document pullpath prints
// (docs/contract.md, JSON and YAML conventions).
const APIVersion = "pullpath.dev/v1alpha1"

// The kinds of document, one per command.
const (
	KindProbeReport    = "ProbeReport"
	KindExplainReport  = "ExplainReport"
	KindDiagnoseReport = "DiagnoseReport"
	KindDemoReport     = "DemoReport"
	KindCauseList      = "CauseList"
	KindVersionInfo    = "VersionInfo"
	// KindMonitorStatus is `pullpath monitor status`, KindMonitorResults
	// `pullpath monitor --once`, KindAzureReport `pullpath azure`.
	KindMonitorStatus  = "MonitorStatus"
	KindMonitorResults = "MonitorResults"
	KindAzureReport    = "AzureReport"
)

// The output formats. A command accepts the ones it can render.
const (
	FormatText = "text"
	FormatJSON = "json"
	FormatYAML = "yaml"
	FormatHTML = "html"
)

// DocumentFormats are the formats of a command without an HTML report.
var DocumentFormats = []string{FormatText, FormatJSON, FormatYAML}

// AllFormats are the formats of a command with an HTML report (probe,
// diagnose).
var AllFormats = []string{FormatText, FormatJSON, FormatYAML, FormatHTML}

// CheckFormatIn returns the one error wording every command uses for an
// unknown -o value, naming the valid ones in valid's order.
func CheckFormatIn(f string, valid []string) error {
	for _, x := range valid {
		if f == x {
			return nil
		}
	}
	return fmt.Errorf("unknown output format %q (valid: %s)", f, strings.Join(valid, ", "))
}

// Document marshals v as one pullpath document of kind: an object whose
// first members are apiVersion and kind, followed by v's own members.
// Before marshalling, Document normalises v in place: every nil slice
// reachable from it becomes empty (so lists print [], never null) and every
// verdict gets the contract's words (layer none and cause ok when ok). v must
// marshal to a JSON object.
func Document(kind string, v any) ([]byte, error) {
	Normalize(v)
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	// Evidence text and URLs read better with their < > & unescaped.
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", kind, err)
	}
	body := bytes.TrimSpace(enc.Bytes())
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("encoding %s: %T is not a JSON object", kind, v)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"apiVersion":%q,"kind":%q`, APIVersion, kind)
	if rest := bytes.TrimSpace(body[1:]); len(rest) > 0 && rest[0] != '}' {
		b.WriteByte(',')
	}
	b.Write(body[1:])
	return b.Bytes(), nil
}

// WriteDocument writes v as one document of kind in format json or yaml.
// JSON is indented by two spaces and does not escape <, > and &; YAML is
// the same document converted by sigs.k8s.io/yaml, as kubectl prints it.
func WriteDocument(w io.Writer, format, kind string, v any) error {
	doc, err := Document(kind, v)
	if err != nil {
		return err
	}
	return writeDoc(w, format, kind, doc)
}

// WriteOwnDocument is WriteDocument for a payload that carries its own
// apiVersion and kind members (monitor.Status, azure.Report): v is
// normalised as Document does, and must say apiVersion APIVersion and kind
// kind.
func WriteOwnDocument(w io.Writer, format, kind string, v any) error {
	Normalize(v)
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return fmt.Errorf("encoding %s: %w", kind, err)
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(enc.Bytes(), &head); err != nil {
		return fmt.Errorf("encoding %s: %T is not a JSON object: %w", kind, v, err)
	}
	if head.APIVersion != APIVersion || head.Kind != kind {
		return fmt.Errorf("encoding %s: %T says apiVersion %q kind %q", kind, v, head.APIVersion, head.Kind)
	}
	return writeDoc(w, format, kind, bytes.TrimSpace(enc.Bytes()))
}

// writeDoc writes the compact JSON document doc as indented JSON or YAML.
func writeDoc(w io.Writer, format, kind string, doc []byte) error {
	switch format {
	case FormatJSON:
		var b bytes.Buffer
		// json.Indent keeps the member order and the unescaped < > &.
		if err := json.Indent(&b, doc, "", "  "); err != nil {
			return fmt.Errorf("encoding %s: %w", kind, err)
		}
		b.WriteByte('\n')
		_, err := w.Write(b.Bytes())
		return err
	case FormatYAML:
		y, err := yaml.JSONToYAML(doc)
		if err != nil {
			return fmt.Errorf("encoding %s as YAML: %w", kind, err)
		}
		_, err = w.Write(y)
		return err
	}
	return fmt.Errorf("unknown output format %q for a document (valid: json, yaml)", format)
}

var verdictType = reflect.TypeFor[verdict.Verdict]()

// Normalize walks v (a pointer, usually) and sets every nil slice it can
// reach to an empty one, and fills every verdict.Verdict with the words the
// contract promises: layer none and cause ok when ok, layer unknown and
// cause unknown when a failure names neither, next [] when nil. Fields
// tagged json:"-" are not visited. Values inside maps are copied, normalised
// and stored back.
func Normalize(v any) {
	normalize(reflect.ValueOf(v), 0)
}

func normalize(v reflect.Value, depth int) {
	if !v.IsValid() || depth > 64 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalize(v.Elem(), depth+1)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			normalize(e, depth+1)
			return
		}
		if !v.CanSet() {
			return
		}
		cp := reflect.New(e.Type()).Elem()
		cp.Set(e)
		normalize(cp, depth+1)
		v.Set(cp)
	case reflect.Struct:
		if v.Type() == verdictType && v.CanSet() {
			fixVerdict(v.Addr().Interface().(*verdict.Verdict))
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			normalize(v.Field(i), depth+1)
		}
	case reflect.Slice:
		if v.IsNil() {
			if v.CanSet() && v.Type().Elem().Kind() != reflect.Uint8 {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			}
			return
		}
		for i := range v.Len() {
			normalize(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			normalize(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var set []kv
		for iter.Next() {
			cp := reflect.New(iter.Value().Type()).Elem()
			cp.Set(iter.Value())
			normalize(cp, depth+1)
			set = append(set, kv{iter.Key(), cp})
		}
		for _, e := range set {
			v.SetMapIndex(e.k, e.v)
		}
	}
}

// fixVerdict gives v the contract's words.
func fixVerdict(v *verdict.Verdict) {
	if v.OK {
		if v.Layer == "" {
			v.Layer = verdict.LayerNone
		}
		if v.Cause == "" {
			v.Cause = "ok"
		}
	} else {
		if v.Layer == "" {
			v.Layer = verdict.LayerUnknown
		}
		if v.Cause == "" {
			v.Cause = string(v.Layer)
		}
	}
	if v.Next == nil {
		v.Next = []string{}
	}
}
