package redfish

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// props reads the properties of a PATCH body or the parameters of an action,
// collecting one Redfish message per problem so a client learns everything
// wrong with a request at once.
type props struct {
	body   map[string]json.RawMessage
	path   string // JSON pointer prefix of body, "#/" or "#/Boot/"
	action string // action name for action parameters, "" for a PATCH
	used   map[string]bool
	msgs   *[]Message
}

func newProps(body map[string]json.RawMessage) *props {
	return &props{body: body, path: "#/", used: map[string]bool{}, msgs: &[]Message{}}
}

// newParams reads the parameters of action; c records the action for
// [classify].
func newParams(c echo.Context, action string, body map[string]json.RawMessage) *props {
	c.Set(actionKey, action)
	p := newProps(body)
	p.action = action
	return p
}

func (p *props) add(m Message) { *p.msgs = append(*p.msgs, m) }

// raw returns the JSON of name and marks it as understood. null is not a
// value of any property or parameter the bridge accepts (the schemas that
// allow it give it no meaning here, and Go's decoder would read it as the
// zero value: SecureBootEnable null as false): it is reported as a type
// error and not returned.
func (p *props) raw(name string) (json.RawMessage, bool) {
	v, ok := p.body[name]
	if !ok {
		return nil, false
	}
	p.used[name] = true
	if string(bytes.TrimSpace(v)) == "null" {
		p.typeError(name, v)
		return nil, false
	}
	return v, true
}

// str reads a string property; allowed, if not nil, lists its values.
func (p *props) str(name string, allowed []string) (string, bool) {
	v, ok := p.raw(name)
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		p.typeError(name, v)
		return "", false
	}
	if allowed != nil && !slices.Contains(allowed, s) {
		p.add(notInList(p.path, name, s, allowed))
		return "", false
	}
	return s, true
}

// boolean reads a boolean property.
func (p *props) boolean(name string) (bool, bool) {
	v, ok := p.raw(name)
	if !ok {
		return false, false
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		p.typeError(name, v)
		return false, false
	}
	return b, true
}

// object reads a nested object property.
func (p *props) object(name string) (*props, bool) {
	v, ok := p.raw(name)
	if !ok {
		return nil, false
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(v, &body); err != nil || body == nil {
		p.typeError(name, v)
		return nil, false
	}
	return &props{body: body, path: p.path + name + "/", action: p.action, used: map[string]bool{}, msgs: p.msgs}, true
}

// require reports a missing required parameter.
func (p *props) require(name string, present bool) {
	if present || p.body[name] != nil {
		return
	}
	if p.action != "" {
		p.add(msg("ActionParameterMissing", []string{p.path + name}, p.action, name))
	} else {
		p.add(msg("PropertyMissing", []string{p.path + name}, name))
	}
}

func (p *props) typeError(name string, v json.RawMessage) {
	val := strings.Trim(string(v), `"`)
	if p.action != "" {
		p.add(msg("ActionParameterValueTypeError", []string{p.path + name}, val, name, p.action))
	} else {
		p.add(msg("PropertyValueTypeError", []string{p.path + name}, val, name))
	}
}

// done reports every property that was not read: unknown ones, and ones
// the resource shows but does not let a client write (readOnly). OData
// annotations (@odata.etag and the like) are ignored.
func (p *props) done(readOnly map[string]any) {
	var names []string
	for name := range p.body {
		if !p.used[name] && !strings.HasPrefix(name, "@") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		switch _, shown := readOnly[name]; {
		case p.action != "":
			p.add(msg("ActionParameterNotSupported", []string{p.path + name}, name, p.action))
		case shown:
			p.add(msg("PropertyNotWritable", []string{p.path + name}, name))
		default:
			p.add(msg("PropertyUnknown", []string{p.path + name}, name))
		}
	}
}

// err is the 400 answer for everything reported, or nil.
func (p *props) err() error {
	if len(*p.msgs) == 0 {
		return nil
	}
	return newError(http.StatusBadRequest, *p.msgs...)
}

// strs converts a list of string-like enum values.
func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
