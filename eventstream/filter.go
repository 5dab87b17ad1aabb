package eventstream

import (
	"fmt"
	"slices"
	"strings"

	"github.com/redfish-bridge/redfish-bridge/event"
	"github.com/redfish-bridge/redfish-bridge/eventsub"
)

// Bounds on a $filter: a hostile one is refused before it is evaluated.
const (
	MaxFilterLen   = 2048
	MaxFilterTerms = 64
	MaxFilterDepth = 8
	maxValueLen    = 256
)

// FilterError is a $filter refused: Reason says why.
type FilterError struct {
	Filter, Reason string
}

func (e *FilterError) Error() string { return fmt.Sprintf("$filter %q: %s", e.Filter, e.Reason) }

// The properties a stream's $filter may compare (DSP0266, "Server-sent
// events"; EventType is deprecated but still sent).
const (
	propFormat      = "EventFormatType"
	propMessageID   = "MessageId"
	propOrigin      = "OriginResource"
	propRegistry    = "RegistryPrefix"
	propType        = "ResourceType"
	propEventType   = "EventType"
	propSubordinate = "SubordinateResources"
)

var filterProps = []string{propFormat, propMessageID, propOrigin, propRegistry, propType, propEventType, propSubordinate}

// Filter is a parsed $filter; the zero Filter lets every event through.
type Filter struct {
	root *node
	// subordinate: SubordinateResources eq true was given, so an
	// OriginResource matches the resources under it too.
	subordinate bool
}

// node is an `or`, an `and` (kids) or one comparison (prop eq val).
type node struct {
	op        string // "or", "and", "eq"
	kids      []*node
	prop, val string
}

// ParseFilter parses a stream's $filter ("" lets everything through):
// comparisons `Property eq 'value'` (or a bare value), joined by `or`
// and `and`, grouped by parentheses. Anything else is a [*FilterError].
func ParseFilter(s string) (Filter, error) {
	if strings.TrimSpace(s) == "" {
		return Filter{}, nil
	}
	bad := func(format string, args ...any) (Filter, error) {
		shown := s
		if len(shown) > 80 {
			shown = shown[:80] + "..."
		}
		return Filter{}, &FilterError{Filter: shown, Reason: fmt.Sprintf(format, args...)}
	}
	if len(s) > MaxFilterLen {
		return bad("longer than %d characters", MaxFilterLen)
	}
	toks, err := tokenize(s)
	if err != nil {
		return bad("%v", err)
	}
	p := &parser{toks: toks}
	root, err := p.or(0)
	if err == nil && p.pos < len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.pos].text)
	}
	if err != nil {
		return bad("%v", err)
	}
	f := Filter{root: root}
	f.subordinate = root.any(func(n *node) bool { return n.prop == propSubordinate && n.val == "true" })
	return f, nil
}

// Matches reports whether e, of EventType eventType, passes the filter.
func (f Filter) Matches(e event.Event, eventType string) bool {
	return f.root == nil || f.root.eval(e, eventType, f.subordinate)
}

func (n *node) eval(e event.Event, eventType string, subordinate bool) bool {
	switch n.op {
	case "or":
		return slices.ContainsFunc(n.kids, func(k *node) bool { return k.eval(e, eventType, subordinate) })
	case "and":
		return !slices.ContainsFunc(n.kids, func(k *node) bool { return !k.eval(e, eventType, subordinate) })
	}
	switch n.prop {
	case propFormat:
		return n.val == eventsub.FormatEvent // no metric reports
	case propMessageID:
		return eventsub.MessageIDMatches(n.val, e.MessageID)
	case propOrigin:
		return n.val == e.Origin || subordinate && strings.HasPrefix(e.Origin, strings.TrimSuffix(n.val, "/")+"/")
	case propRegistry:
		return strings.HasPrefix(e.MessageID, n.val+".")
	case propType:
		return n.val == e.ResourceType
	case propEventType:
		return n.val == eventType
	}
	return true // SubordinateResources: a modifier, not a condition
}

func (n *node) any(f func(*node) bool) bool {
	return f(n) || slices.ContainsFunc(n.kids, func(k *node) bool { return k.any(f) })
}

// token is one lexeme of a filter; quoted values are kind 'v'.
type token struct {
	kind byte // '(' ')' 'w' (a word) 'v' (a quoted value)
	text string
}

func tokenize(s string) ([]token, error) {
	if i := strings.IndexFunc(s, func(r rune) bool { return (r < ' ' && r != '\t') || r > '~' }); i >= 0 {
		return nil, fmt.Errorf("a character out of printable ASCII at %d", i)
	}
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case ' ', '\t':
			i++
		case '(', ')':
			toks = append(toks, token{kind: c, text: string(c)})
			i++
		case '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(s) {
					return nil, fmt.Errorf("unterminated quoted value")
				}
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' { // '' is a quote
						b.WriteByte('\'')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			toks = append(toks, token{kind: 'v', text: b.String()})
		default:
			j := i
			for j < len(s) && s[j] > ' ' && s[j] <= '~' && s[j] != '(' && s[j] != ')' && s[j] != '\'' {
				j++
			}
			toks = append(toks, token{kind: 'w', text: s[i:j]})
			i = j
		}
		if len(toks) > 4*MaxFilterTerms {
			return nil, fmt.Errorf("more than %d comparisons", MaxFilterTerms)
		}
	}
	return toks, nil
}

// parser is a recursive-descent parser of the tokens, bounded in depth
// and in comparisons.
type parser struct {
	toks  []token
	pos   int
	terms int
}

func (p *parser) peekWord(w string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == 'w' && p.toks[p.pos].text == w
}

func (p *parser) or(depth int) (*node, error) {
	return p.join(depth, "or", p.and)
}

func (p *parser) and(depth int) (*node, error) {
	return p.join(depth, "and", p.unary)
}

// join parses next (op next)*.
func (p *parser) join(depth int, op string, next func(int) (*node, error)) (*node, error) {
	first, err := next(depth)
	if err != nil {
		return nil, err
	}
	n := &node{op: op, kids: []*node{first}}
	for p.peekWord(op) {
		p.pos++
		k, err := next(depth)
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, k)
	}
	if len(n.kids) == 1 {
		return first, nil
	}
	return n, nil
}

func (p *parser) unary(depth int) (*node, error) {
	if p.pos >= len(p.toks) {
		return nil, fmt.Errorf("a comparison is missing at the end")
	}
	if p.toks[p.pos].kind == '(' {
		if depth >= MaxFilterDepth {
			return nil, fmt.Errorf("parentheses nested deeper than %d", MaxFilterDepth)
		}
		p.pos++
		n, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.pos >= len(p.toks) || p.toks[p.pos].kind != ')' {
			return nil, fmt.Errorf("a ')' is missing")
		}
		p.pos++
		return n, nil
	}
	return p.comparison()
}

// comparison parses `Property eq value` and checks the value.
func (p *parser) comparison() (*node, error) {
	if p.terms++; p.terms > MaxFilterTerms {
		return nil, fmt.Errorf("more than %d comparisons", MaxFilterTerms)
	}
	if p.pos+3 > len(p.toks) {
		return nil, fmt.Errorf("want `Property eq 'value'`")
	}
	prop, op, val := p.toks[p.pos], p.toks[p.pos+1], p.toks[p.pos+2]
	if prop.kind != 'w' || !slices.Contains(filterProps, prop.text) {
		return nil, fmt.Errorf("%q is not a property a stream filters on (%s)", prop.text, strings.Join(filterProps, ", "))
	}
	if op.kind != 'w' || op.text != "eq" {
		return nil, fmt.Errorf("%s %q: the only comparison is eq", prop.text, op.text)
	}
	if val.kind != 'w' && val.kind != 'v' {
		return nil, fmt.Errorf("%s eq: a value is missing", prop.text)
	}
	p.pos += 3
	if err := checkValue(prop.text, val.text); err != nil {
		return nil, err
	}
	return &node{op: "eq", prop: prop.text, val: val.text}, nil
}

func checkValue(prop, val string) error {
	var allowed []string
	switch prop {
	case propFormat:
		allowed = []string{eventsub.FormatEvent, "MetricReport"}
	case propEventType:
		allowed = eventsub.EventTypes
	case propSubordinate:
		allowed = []string{"true", "false"}
	}
	switch {
	case allowed != nil && !slices.Contains(allowed, val):
		return fmt.Errorf("%s %q: not one of %s", prop, val, strings.Join(allowed, ", "))
	case val == "" || len(val) > maxValueLen:
		return fmt.Errorf("%s: a value of 1 to %d characters", prop, maxValueLen)
	}
	return nil
}
