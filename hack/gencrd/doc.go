// Command gencrd turns controller-gen's KubeVirt CRDs into the two variants
// package crds embeds.
//
// controller-gen (run over kubevirt.io/api/core/v1 by `make generate-crds`
// from the pinned module in source/) produces the VirtualMachine and
// VirtualMachineInstance schemas virt-operator installs. gencrd adds what
// virt-operator adds on top (label kubevirt.io, short names, category all,
// printer columns, the status subresource on VirtualMachine, the deprecated
// v1alpha3 version serving the same schema, backticks in descriptions
// turned into single quotes) and writes:
//
//	<out>/stock/<plural>.kubevirt.io.yaml    as virt-operator installs them
//	<out>/maplist/<plural>.kubevirt.io.yaml  disks, volumes, interfaces and
//	                                         networks as list-type map keyed
//	                                         by name
//
// Usage: gencrd -in <controller-gen output dir> -out crds
package main
