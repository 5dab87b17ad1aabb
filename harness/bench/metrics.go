package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIServerCounts is apiserver_request_total summed by verb and
// resource[/subresource].
type APIServerCounts map[string]float64

// ScrapeRequests reads apiserver_request_total from the apiserver's
// /metrics (cfg must be allowed to read it; the admin identity is).
func ScrapeRequests(ctx context.Context, cfg *rest.Config) (APIServerCounts, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metrics client: %w", err)
	}
	raw, err := kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scrape apiserver /metrics: %w", err)
	}
	return ParseRequests(raw)
}

// ParseRequests extracts apiserver_request_total from a Prometheus text
// exposition.
func ParseRequests(raw []byte) (APIServerCounts, error) {
	out := APIServerCounts{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(line, "} ")
		if !ok {
			return nil, fmt.Errorf("parse metrics line %q", sc.Text())
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			return nil, fmt.Errorf("parse metrics value in %q: %w", sc.Text(), err)
		}
		l := parseLabels(labels)
		res := l["resource"]
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		out[l["verb"]+" "+res] += v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	return out, nil
}

// parseLabels parses `a="x",b="y"` (label values here hold no quotes or
// commas).
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// Sub returns c - before.
func (c APIServerCounts) Sub(before APIServerCounts) APIServerCounts {
	out := APIServerCounts{}
	for k, v := range c {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Total sums every count.
func (c APIServerCounts) Total() float64 {
	var n float64
	for _, v := range c {
		n += v
	}
	return n
}
