package redfish

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// A request body naming the same property twice is refused (400
// PropertyDuplicate naming it): encoding/json keeps the last one, other
// parsers the first, and a body that means different things to a proxy, an
// auditing tool and the bridge is how parser-differential attacks work.
// No Redfish client known to the bridge (sushy, gofish, redfishtool)
// sends duplicates.

// duplicateKey returns the JSON pointer ("#/Boot/BootSourceOverrideTarget")
// of the first property that appears twice in one object of raw, a valid
// JSON document, and whether there is one. Keys are compared after
// unescaping, exactly (the decoders read bodies as maps, which match keys
// exactly).
func duplicateKey(raw []byte) (string, bool) {
	type level struct {
		seen   map[string]bool // nil for an array
		name   string          // its key or index in the parent
		expect bool            // an object's next token is a key or '}'
		key    string          // an object's current key
		index  int             // an array's current index
	}
	var stack []*level
	top := func() *level {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	child := func() string { // the name of a value starting now
		switch t := top(); {
		case t == nil:
			return ""
		case t.seen != nil:
			return escapePointer(t.key)
		default:
			return strconv.Itoa(t.index)
		}
	}
	finish := func() { // a value ended
		if t := top(); t != nil && t.seen != nil {
			t.expect = true
		} else if t != nil {
			t.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if t := top(); t != nil && t.seen != nil && t.expect {
			if tok == json.Delim('}') {
				stack = stack[:len(stack)-1]
				finish()
				continue
			}
			k, _ := tok.(string)
			if t.seen[k] {
				parts := []string{"#"}
				for _, l := range stack[1:] {
					parts = append(parts, l.name)
				}
				return strings.Join(append(parts, escapePointer(k)), "/"), true
			}
			t.seen[k], t.expect, t.key = true, false, k
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{seen: map[string]bool{}, name: child(), expect: true})
			continue
		case json.Delim('['):
			stack = append(stack, &level{name: child()})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		finish()
	}
}

// escapePointer escapes a key as a JSON pointer token (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
