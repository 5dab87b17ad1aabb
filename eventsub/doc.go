// Package eventsub owns the EventService's subscriptions (Redfish
// EventDestinations): what one is ([Subscription]), which requests make
// a valid one ([Validate]: the destination obeys the image address
// policy, filters and headers are bounded), which events it receives
// ([Subscription.Matches]) and where it is kept ([Store]).
//
// Every subscription lives in one Secret of the bridge's namespace, one
// data key per subscription, so that every replica and every restart
// sees the same ones, the HttpHeaders a client sets (often credentials)
// are kept as a Secret and never in a ConfigMap, and the bridge's Role
// names the one object it may write. Writes are updates guarded by the
// Secret's resourceVersion, so the caps on subscriptions per user and in
// all ([Limits]) hold across replicas.
package eventsub
