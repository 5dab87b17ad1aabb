// Package objmac proves that the bridge wrote an object's content: a MAC
// under a key only the bridge's replicas hold, over the object's identity
// and the content the bridge acts on, kept in an annotation beside it.
//
// Labels, owner references and managedFields prove nothing: any user who
// can create or update the object in its namespace can copy them. A MAC
// cannot be forged without the key, which lives in the bridge's own
// namespace (the session key Secret), never in a tenant's. A key is
// derived per purpose ([Derive]), so a MAC for one kind of object is never
// valid for another, nor a session token's signature.
package objmac
