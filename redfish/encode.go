package redfish

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
)

// appendJSON appends v encoded exactly as [json.Marshal] encodes it (map
// keys sorted, HTML characters escaped), without reflection for what a
// rendered resource is made of: maps of string keys, slices, strings
// (also of named string types), numbers, booleans and nil. Anything else
// (and a string that needs escaping, a float outside the plain range) is
// appended as json.Marshal encodes it. A render of a System encoded with
// json.Marshal was ~60% of a GET that missed the kept bodies.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		if a := math.Abs(x); a == 0 || (a >= 1e-6 && a < 1e21) {
			return strconv.AppendFloat(b, x, 'f', -1, 64), nil
		}
	case map[string]any:
		return appendObject(b, x)
	case []any:
		return appendSlice(b, x == nil, len(x), func(b []byte, i int) ([]byte, error) { return appendJSON(b, x[i]) })
	case []map[string]any:
		return appendSlice(b, x == nil, len(x), func(b []byte, i int) ([]byte, error) { return appendObject(b, x[i]) })
	case []string:
		return appendSlice(b, x == nil, len(x), func(b []byte, i int) ([]byte, error) { return appendString(b, x[i]), nil })
	case memberLinks:
		return x.appendTo(b), nil
	default:
		if rv := reflect.ValueOf(v); plainString(rv.Type()) {
			return appendString(b, rv.String()), nil
		} else if rv.Kind() == reflect.Slice && !marshals(rv.Type()) && plainString(rv.Type().Elem()) {
			return appendSlice(b, rv.IsNil(), rv.Len(), func(b []byte, i int) ([]byte, error) { return appendString(b, rv.Index(i).String()), nil })
		}
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("encode %T: %w", v, err)
	}
	return append(b, enc...), nil
}

// appendObject appends m with its keys sorted, as encoding/json does.
func appendObject(b []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendSlice appends a JSON array of n elements, each by elem; a nil
// slice is null, as encoding/json encodes it.
func appendSlice(b []byte, isNil bool, n int, elem func([]byte, int) ([]byte, error)) ([]byte, error) {
	if isNil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = elem(b, i); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// appendString appends s quoted: as is when it is printable ASCII that
// encoding/json leaves alone, else as json.Marshal escapes it.
func appendString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s) // a string always marshals
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// marshals reports whether t encodes itself (encoding/json calls it).
func marshals(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)
}

// plainString reports whether t is a string type that encoding/json
// encodes as its string value.
func plainString(t reflect.Type) bool { return t.Kind() == reflect.String && !marshals(t) }

// encodeBuffers are the buffers bodies are encoded into before they are
// copied out at their size.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// marshalResource encodes every resource body: [marshalBody] (a test
// compares it with json.Marshal's).
var marshalResource = marshalBody

// marshalBody is body's JSON as json.Marshal writes it ([appendJSON]).
func marshalBody(body obj) ([]byte, error) {
	p := encodeBuffers.Get().(*[]byte) // the pool holds only these
	b, err := appendObject((*p)[:0], body)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(b)
	if cap(b) <= 64<<10 { // a huge collection's buffer is not kept
		*p = b
		encodeBuffers.Put(p)
	}
	return out, nil
}
