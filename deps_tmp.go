//go:build deps

// This file keeps the product's dependencies in go.mod while packages are being written; delete it once every dependency is imported by real code.

package main
import (
 _ "k8s.io/client-go/dynamic"
 _ "k8s.io/client-go/kubernetes"
 _ "k8s.io/client-go/tools/leaderelection"
 _ "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
 _ "kubevirt.io/api/core/v1"
 _ "github.com/labstack/echo/v4"
 _ "github.com/google/go-cmp/cmp"
 _ "sigs.k8s.io/structured-merge-diff/v6/fieldpath"
 _ "sigs.k8s.io/yaml"
 _ "k8s.io/klog/v2"
)
func main(){}
