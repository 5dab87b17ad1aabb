// Package eventrecv is a Redfish event destination for tests: an HTTP
// server on 127.0.0.1 that records the EventRecords POSTed to it (the
// Event's Context, each record's MessageId and OriginOfCondition, the
// request's headers) and lets a test wait for one, woken by each POST
// rather than polling.
package eventrecv
