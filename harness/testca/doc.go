// Package testca makes throwaway certificate authorities and server
// certificates for tests: an image server on loopback with its own private
// CA, the way metal3 serves Ironic's ISOs. Only tests import it.
package testca
