package manager_test

import (
	"context"
	"fmt"

	"github.com/redfish-bridge/redfish-bridge/manager"
)

// A concern's package adds its long-running part with one Add; the
// composition root starts the manager.
func Example() {
	m := manager.New(manager.Options{}) // no Elect: this replica leads alone
	synced := map[string]bool{}
	_ = m.Add(manager.CacheFunc(func(context.Context) error { synced["vms"] = true; return nil }), manager.Caches)
	done := make(chan struct{})
	_ = m.Add(manager.PartFunc(func(ctx context.Context) error {
		fmt.Println("leader part runs; leading:", m.Leading())
		close(done)
		<-ctx.Done()
		return nil
	}), manager.Leader)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fmt.Println("ready before Start:", m.Ready())
	if err := m.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("caches synced:", synced["vms"])
	if err := m.Serve(ctx); err != nil {
		fmt.Println(err)
		return
	}
	<-done
	fmt.Println("ready after Serve:", m.Ready())
	cancel()
	fmt.Println("Wait:", m.Wait())
	// Output:
	// ready before Start: caches not synced yet
	// caches synced: true
	// leader part runs; leading: true
	// ready after Serve: <nil>
	// Wait: <nil>
}
