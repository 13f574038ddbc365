package explain

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// wordJSONError rewords a JSON decode error for people: the field as the
// input names it and what kind of value it wants, never the Go type it was
// decoded into ("Go struct field k8sObject.items of type
// explain.k8sObject"). Other errors are returned as they are.
func wordJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the document"
		} else {
			field = "field " + field
		}
		return fmt.Errorf("%s is a JSON %s, want %s (at byte %d)", field, te.Value, jsonWant(te.Type), te.Offset)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %s", se.Offset, se.Error())
	}
	return err
}

// jsonWant says in JSON words what a Go type accepts.
func jsonWant(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return "any value"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		if t.String() == "time.Time" {
			return "an RFC 3339 time string"
		}
		return "an object"
	}
	return "a string"
}
