package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// cgroupMemoryFiles hold the container's memory limit: cgroup v2, then v1.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// memoryLimitPercent of the container's memory limit is the Go runtime's
// soft memory limit: the garbage collector works harder near it instead of
// letting the heap's headroom (GOGC) push the process past the container's
// limit, where the kernel kills it. The rest is for what the runtime does
// not count (the binary, thread stacks outside the heap).
const memoryLimitPercent = 90

// noCgroupLimit: cgroup v1 reports "no limit" as a number near 2^63.
const noCgroupLimit = 1 << 60

// containerMemoryLimit returns the memory limit of the bridge's cgroup in
// bytes, 0 when there is none (no cgroup file, "max", v1's huge number).
func containerMemoryLimit(files []string) (int64, error) {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("read memory limit: %w", err)
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("memory limit in %s: %w", f, err)
		}
		if n <= 0 || n >= noCgroupLimit {
			return 0, nil
		}
		return n, nil
	}
	return 0, nil
}

// applyMemoryLimit sets the runtime's soft memory limit to
// [memoryLimitPercent] of the container's memory limit, unless GOMEMLIMIT
// says otherwise or there is no limit. It logs what it did.
func applyMemoryLimit(log *slog.Logger, lookupEnv func(string) (string, bool), files []string) {
	if v, ok := lookupEnv("GOMEMLIMIT"); ok && v != "" {
		log.Info("memory limit from GOMEMLIMIT", "GOMEMLIMIT", v)
		return
	}
	limit, err := containerMemoryLimit(files)
	if err != nil {
		log.Warn("container memory limit not applied to the Go runtime", "err", err)
		return
	}
	if limit == 0 {
		return
	}
	soft := limit / 100 * memoryLimitPercent
	debug.SetMemoryLimit(soft)
	log.Info("Go runtime memory limit set from the container's", "containerLimitBytes", limit, "goMemLimitBytes", soft)
}
