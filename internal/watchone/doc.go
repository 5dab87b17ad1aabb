// Package watchone watches one named object (an informer on its namespace
// with a metadata.name field selector, which RBAC's resourceNames allow)
// and hands each version of it to the caller: the bridge's users Secret
// (kubeauth) and the EventService's subscriptions Secret (eventsub).
package watchone
