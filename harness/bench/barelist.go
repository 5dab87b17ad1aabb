package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/redfish-bridge/redfish-bridge/harness/testcluster"
)

// bareListPaths are the collections the bridge's informers list at start
// (inventory: every VirtualMachine, VirtualMachineInstance and
// PersistentVolumeClaim).
var bareListPaths = []string{
	"/apis/kubevirt.io/v1/virtualmachines",
	"/apis/kubevirt.io/v1/virtualmachineinstances",
	"/api/v1/persistentvolumeclaims",
}

// bareListPage is the page size of the bare list: client-go's pager's
// (what a reflector falls back to without a watch list). One unpaged GET
// of 10,000 VMs ran past the apiserver's 60 s request timeout (504) on the
// loaded 2-core machine.
const bareListPage = 500

// BareList times what the apiserver takes to list the objects the bridge's
// informers list to a bare client: each collection in pages of
// bareListPage (plain GETs following the continue token), the three at
// once (as the informers start), the JSON read and discarded. It
// returns the time until the last body ended and the bytes read. Each
// collection is first read once with limit=1 until the apiserver answers
// it: the apiserver builds a custom resource's watch cache at its first
// request and answers 429 until it is (the bridge's informers meet a
// warm cache too: the bench's own watch of the VMs, virt-controller's of
// the VMIs).
func BareList(ctx context.Context, cfg *rest.Config) (time.Duration, int64, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, 0, fmt.Errorf("bare list client: %w", err)
	}
	for _, p := range bareListPaths {
		if err := warm(ctx, hc, cfg.Host+p+"?limit=1"); err != nil {
			return 0, 0, err
		}
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		bytes int64
	)
	start := time.Now()
	for _, p := range bareListPaths {
		wg.Go(func() {
			n, err := bareListAll(ctx, hc, cfg.Host+p)
			mu.Lock()
			defer mu.Unlock()
			bytes += n
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	return time.Since(start), bytes, errors.Join(errs...)
}

// bareListAll lists url page by page; it returns the bytes read.
func bareListAll(ctx context.Context, hc *http.Client, url string) (int64, error) {
	var total int64
	next := ""
	for {
		q := fmt.Sprintf("?limit=%d", bareListPage)
		if next != "" {
			q += "&continue=" + neturl.QueryEscape(next)
		}
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		n, err := bareGetInto(ctx, hc, url+q, &page)
		total += n
		if err != nil {
			return total, err
		}
		if next = page.Metadata.Continue; next == "" {
			return total, nil
		}
	}
}

// warm GETs url every 200 ms until it answers 200 (at most a minute).
func warm(ctx context.Context, hc *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		_, err := bareGet(ctx, hc, url)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("warm up: %w", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func bareGet(ctx context.Context, hc *http.Client, url string) (int64, error) {
	return bareGetInto(ctx, hc, url, nil)
}

// bareGetInto GETs url and, when out is set, decodes the JSON into it.
func bareGetInto(ctx context.Context, hc *http.Client, url string, out any) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("bare list %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("bare list %s: %w", url, err)
	}
	defer resp.Body.Close() // read to the end below
	body, err := io.ReadAll(resp.Body)
	n := int64(len(body))
	if err != nil {
		return n, fmt.Errorf("bare list %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("bare list %s: HTTP %d", url, resp.StatusCode)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return n, fmt.Errorf("bare list %s: %w", url, err)
		}
	}
	return n, nil
}

// bareList times [BareList] into res (a failure is a note).
func bareList(ctx context.Context, cluster *testcluster.Cluster, res *RSSResult) {
	var err error
	res.BareList, res.BareListBytes, err = BareList(ctx, cluster.Admin)
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("bare list: %v", err))
		res.BareList = 0
	}
	res.progress("bare list of VMs, VMIs and PVCs: %s, %.1f MB (error: %v)", res.BareList.Round(time.Millisecond), float64(res.BareListBytes)/1e6, err)
}

// waitReady polls url (the bridge's /readyz) every 100 ms until it answers
// 200 or ctx ends.
func waitReady(ctx context.Context, url string) error {
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("readyz: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready (last: %w): %w", url, last, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
