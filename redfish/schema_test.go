package redfish

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/redfish-bridge/redfish-bridge/harness/testutil"
)

const schemaURLPrefix = "http://redfish.dmtf.org/schemas/v1/"

// schemaLoader serves DMTF schema URLs from the local folder. Schemas the
// folder lacks (Swordfish, resources the service does not serve) load as
// stubs whose referenced definitions accept anything: only what the service
// serves is checked.
type schemaLoader struct{ dir string }

var refRE = regexp.MustCompile(`"\$ref":\s*"([^"#]+)#/definitions/([A-Za-z0-9_]+)"`)

// stub is a schema whose every definition that local schemas refer to in
// url accepts anything.
func (l schemaLoader) stub(url string) (any, error) {
	refs, err := l.refs()
	if err != nil {
		return nil, err
	}
	defs := map[string]any{}
	for _, name := range refs[url] {
		defs[name] = map[string]any{}
	}
	return map[string]any{"definitions": defs}, nil
}

// refs maps every schema URL the local schemas refer to the definitions
// they use in it.
func (l schemaLoader) refs() (map[string][]string, error) {
	refsOnce.Do(func() {
		files, err := filepath.Glob(filepath.Join(l.dir, "*.json"))
		if err != nil {
			refsErr = err
			return
		}
		refsMap = map[string][]string{}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				refsErr = err
				return
			}
			for _, m := range refRE.FindAllStringSubmatch(string(raw), -1) {
				refsMap[m[1]] = append(refsMap[m[1]], m[2])
			}
		}
	})
	return refsMap, refsErr
}

var (
	refsOnce sync.Once
	refsMap  map[string][]string
	refsErr  error
)

func (l schemaLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, schemaURLPrefix)
	if !ok {
		return l.stub(url)
	}
	f, err := os.Open(filepath.Join(l.dir, name))
	if os.IsNotExist(err) {
		return l.stub(url)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	if m, ok := doc.(map[string]any); ok {
		// Redfish's own meta-schema is not published with the schemas; its
		// keywords beyond draft 7 are annotations only.
		delete(m, "$schema")
	}
	return doc, nil
}

type validator struct {
	dir     string
	mu      sync.Mutex
	c       *jsonschema.Compiler
	schemas map[string]*jsonschema.Schema
}

func newValidator(t *testing.T) *validator {
	t.Helper()
	schemas := testutil.SharedDir(t, "redfish", "json-schema")
	d := filepath.Dir(schemas)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(schemaLoader{dir: schemas})
	return &validator{dir: d, c: c, schemas: map[string]*jsonschema.Schema{}}
}

// schemaFor maps "#ComputerSystem.v1_27_0.ComputerSystem" to
// ComputerSystem.v1_27_0.json#/definitions/ComputerSystem and
// "#ComputerSystemCollection.ComputerSystemCollection" to
// ComputerSystemCollection.json#/definitions/ComputerSystemCollection.
func schemaFor(odataType string) string {
	t := strings.TrimPrefix(odataType, "#")
	i := strings.LastIndex(t, ".")
	if i < 0 {
		return ""
	}
	return schemaURLPrefix + t[:i] + ".json#/definitions/" + t[i+1:]
}

func (v *validator) validate(t *testing.T, what string, doc any) {
	t.Helper()
	url := errorSchemaURL
	if m, ok := doc.(map[string]any); ok {
		if ot, ok := m["@odata.type"].(string); ok {
			url = schemaFor(ot)
		}
	}
	v.validateAgainst(t, what, url, doc)
}

const errorSchemaURL = schemaURLPrefix + "redfish-error.v1_0_2.json#/definitions/RedfishError"

func (v *validator) validateAgainst(t *testing.T, what, url string, doc any) {
	t.Helper()
	file, _, _ := strings.Cut(strings.TrimPrefix(url, schemaURLPrefix), "#")
	if _, err := os.Stat(filepath.Join(v.dir, "json-schema", file)); err != nil {
		t.Logf("%s: no local schema %s, not validated", what, file)
		return
	}
	v.mu.Lock()
	sch, ok := v.schemas[url]
	if !ok {
		var err error
		if sch, err = v.c.Compile(url); err != nil {
			v.mu.Unlock()
			t.Fatalf("compile %s: %v", url, err)
		}
		v.schemas[url] = sch
	}
	v.mu.Unlock()
	// Round-trip through JSON so numbers are what the validator expects.
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s does not validate against %s:\n%v\n%s", what, url, err, raw)
	}
}
