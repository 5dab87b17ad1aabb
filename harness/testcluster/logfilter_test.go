package testcluster

import (
	"strconv"
	"strings"
	"testing"
)

// TestLogFilter pins which lines a test on a shared cluster gets, on lines
// as virt-controller (JSON, klog) and kube-apiserver (klog) write them:
// its own namespace's, and those about no test's namespace; not another
// test's, even one whose name starts like its own (p1, p11).
func TestLogFilter(t *testing.T) {
	f := newLogFilter([]string{"p1"}, map[string]bool{"p1": true, "p11": true, "p2": true})
	for _, c := range []struct {
		line string
		keep bool
	}{
		{`{"component":"virt-controller","level":"info","msg":"Started VM by creating the new virtual machine instance onoff","name":"onoff","namespace":"p1"}`, true},
		{`{"component":"virt-controller","level":"info","msg":"Started VM by creating the new virtual machine instance onoff","name":"onoff","namespace":"p11"}`, false},
		{`{"component":"virt-controller","level":"info","msg":"Stopping VM p1 copy","name":"p1","namespace":"p2"}`, false},
		{`{"component":"virt-controller","level":"info","msg":"re-enqueuing VirtualMachine p1/onoff","pos":"vm.go:348"}`, true},
		{`{"component":"virt-controller","level":"info","msg":"re-enqueuing VirtualMachine p11/onoff","pos":"vm.go:348"}`, false},
		{`{"component":"virt-controller","level":"info","msg":"lease lost","namespace":"kubevirt"}`, true},
		{`{"component":"virt-controller","level":"info","msg":"Starting VirtualMachine controller."}`, true},
		{`E1203 19:17:36.351200    3176 util.go:66] "Unhandled Error" err="virtualmachines.kubevirt.io \"onoff\" not found"`, true},
		{`I1203 19:26:08.389924    8518 httplog.go:134] "HTTP" verb="PATCH" URI="/apis/kubevirt.io/v1/namespaces/p2/virtualmachines/x" resp=409`, false},
		{`I1203 19:26:08.389924    8518 httplog.go:134] "HTTP" verb="PATCH" URI="/apis/kubevirt.io/v1/namespaces/p1/virtualmachines/x" resp=409`, true},
		{`panic: runtime error: invalid memory address or nil pointer dereference`, true},
	} {
		if got := f.keep([]byte(c.line)); got != c.keep {
			t.Errorf("keep = %v, want %v: %s", got, c.keep, c.line)
		}
	}
	all := newLogFilter(nil, map[string]bool{"p2": true})
	if !all.keep([]byte(`{"msg":"x","namespace":"p2"}`)) {
		t.Error("a filter without namespaces dropped a line")
	}
}

// TestLogTailBounded checks a tail keeps the last lines the filter keeps
// and counts all of them.
func TestLogTailBounded(t *testing.T) {
	var b strings.Builder
	for i := range 500 {
		ns := []string{"p1", "p2"}[i%2]
		b.WriteString(`{"msg":"line ` + strconv.Itoa(i) + `","namespace":"` + ns + `"}` + "\n")
	}
	lines, total := newLogFilter([]string{"p1"}, map[string]bool{"p2": true}).tail([]byte(b.String()), 200)
	if total != 250 || len(lines) != 200 {
		t.Fatalf("tail: %d of %d lines, want 200 of 250", len(lines), total)
	}
	if first, last := string(lines[0]), string(lines[199]); !strings.Contains(first, `"line 100"`) || !strings.Contains(last, `"line 498"`) {
		t.Errorf("tail from %s to %s, want lines 100 to 498", first, last)
	}
	for _, l := range lines {
		if !strings.Contains(string(l), `"namespace":"p1"`) {
			t.Errorf("tail has another namespace's line %s", l)
		}
	}
}
