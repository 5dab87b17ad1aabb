package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func list(item apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &item}}
}

func obj(props map[string]apiextensionsv1.JSONSchemaProps, required ...string) apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props, Required: required}
}

var str = apiextensionsv1.JSONSchemaProps{Type: "string"}

func TestKeyByName(t *testing.T) {
	mapType := "map"
	tests := []struct {
		name    string
		in      apiextensionsv1.JSONSchemaProps
		want    apiextensionsv1.JSONSchemaProps
		wantErr string
	}{
		{
			name: "required name",
			in:   list(obj(map[string]apiextensionsv1.JSONSchemaProps{"name": str}, "name")),
			want: func() apiextensionsv1.JSONSchemaProps {
				l := list(obj(map[string]apiextensionsv1.JSONSchemaProps{"name": str}, "name"))
				l.XListType, l.XListMapKeys = &mapType, []string{"name"}
				return l
			}(),
		},
		{
			name: "optional name becomes required",
			in:   list(obj(map[string]apiextensionsv1.JSONSchemaProps{"name": str, "a": str}, "a")),
			want: func() apiextensionsv1.JSONSchemaProps {
				l := list(obj(map[string]apiextensionsv1.JSONSchemaProps{"name": str, "a": str}, "a", "name"))
				l.XListType, l.XListMapKeys = &mapType, []string{"name"}
				return l
			}(),
		},
		{name: "no name", in: list(obj(map[string]apiextensionsv1.JSONSchemaProps{"a": str})), wantErr: "no name"},
		{name: "not an array", in: obj(nil), wantErr: "not an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := *tt.in.DeepCopy()
			err := keyByName(&got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEditMissingPath(t *testing.T) {
	root := obj(map[string]apiextensionsv1.JSONSchemaProps{"spec": obj(map[string]apiextensionsv1.JSONSchemaProps{})})
	err := edit(&root, []string{"spec", "volumes"}, keyByName)
	if err == nil || !strings.Contains(err.Error(), `no property "volumes"`) {
		t.Errorf("err = %v, want a missing-property error", err)
	}
}
