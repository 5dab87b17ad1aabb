package main

import (
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestApplyMemoryLimit: in a container with a memory limit the bridge's Go
// runtime collects before reaching it (90% of it), so a large inventory
// makes the GC work harder instead of getting the pod OOM-killed; GOMEMLIMIT
// set by the operator wins, and no limit leaves the runtime alone.
func TestApplyMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v2 := write("memory.max", "268435456\n")
	v2max := write("memory.max.unlimited", "max\n")
	v1 := write("memory.limit_in_bytes", "536870912\n")
	v1none := write("memory.limit_in_bytes.unlimited", "9223372036854771712\n")
	missing := filepath.Join(dir, "absent")
	noEnv := func(string) (string, bool) { return "", false }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tt := range []struct {
		name  string
		files []string
		env   func(string) (string, bool)
		want  int64
	}{
		{"cgroup v2", []string{v2, v1}, noEnv, 268435456 / 100 * 90},
		{"cgroup v1", []string{missing, v1}, noEnv, 536870912 / 100 * 90},
		{"v2 without limit", []string{v2max, v1}, noEnv, math.MaxInt64},
		{"v1 without limit", []string{missing, v1none}, noEnv, math.MaxInt64},
		{"no cgroup", []string{missing}, noEnv, math.MaxInt64},
		{"GOMEMLIMIT wins", []string{v2}, func(k string) (string, bool) { return "100MiB", k == "GOMEMLIMIT" }, math.MaxInt64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetMemoryLimit(math.MaxInt64)
			applyMemoryLimit(log, tt.env, tt.files)
			if got := debug.SetMemoryLimit(-1); got != tt.want {
				t.Errorf("runtime memory limit %d, want %d", got, tt.want)
			}
		})
	}
}
