package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/redfish-bridge/redfish-bridge/media"
)

// runCache is `redfish-bridge cache prune`: it deletes the image cache
// entries of --namespaces (media.PruneCache) and prints one line per entry
// found. The chart runs it as a pre-delete hook, with --include-in-use.
func runCache(ctx context.Context, s streams, args []string) error {
	fs := flagSet("cache", cacheSummary, s, "prune")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file; empty uses $KUBECONFIG, else the in-cluster service account")
	namespaces := fs.String("namespaces", "", "comma-separated namespaces whose entries are pruned (the bridge's --namespaces); empty means all")
	inUse := fs.Bool("include-in-use", false, "also delete the entries an import pod that has not ended mounts: Kubernetes keeps such a PVC until the pod ends, so its copy completes; an import pod created for it after the delete cannot start, so this is for uninstall")
	dryRun := fs.Bool("dry-run", false, "delete nothing; print what would be deleted")
	var verb string
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		verb, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if verb == "" && fs.NArg() > 0 {
		verb = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("cache %s: unexpected arguments %q", verb, fs.Args())
	}
	if verb != "prune" {
		return errors.New("cache: usage: redfish-bridge cache prune [flags] (prune is the only verb)")
	}
	cfg, err := kubeConfig(*kubeconfig)
	if err != nil {
		return fmt.Errorf("cache prune: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("cache prune: kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("cache prune: dynamic client: %w", err)
	}
	entries, err := media.PruneCache(ctx, kube, dyn, media.PruneOptions{Namespaces: splitList(*namespaces), InUse: *inUse, DryRun: *dryRun})
	printPruned(s, entries, *dryRun)
	if err != nil {
		return fmt.Errorf("cache prune: %w", err)
	}
	return nil
}

// printPruned prints what PruneCache found: one line per entry, then a sum.
func printPruned(s streams, entries []media.PrunedEntry, dryRun bool) {
	tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
	deleted, kept := 0, 0
	for _, e := range entries {
		what := "deleted"
		switch {
		case !e.Deleted:
			what = "kept (in use)"
			kept++
		case dryRun:
			what = "would delete"
			deleted++
		case e.InUse:
			what = "deleted (in use: goes when its import pod ends)"
			deleted++
		default:
			deleted++
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", e.Namespace, e.Name, e.Size, what)
	}
	_ = tw.Flush()
	verb := "deleted"
	if dryRun {
		verb = "to delete"
	}
	fmt.Fprintf(s.out, "image cache: %d entries %s, %d in use kept\n", deleted, verb, kept)
}
