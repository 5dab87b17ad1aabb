// Package testca makes throwaway certificate authorities and server
// certificates for tests: an image server on loopback with its own private
// CA, the way metal3 serves Ironic's ISOs, and a plain HTTP image that
// changes under one URL ([VersionedImage]). Only tests import it.
package testca
