package inventory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A cached VM's compact object ([CompactVM]) is kept encoded in one string
// (packed): as unstructured maps it cost ~10 KB of heap where its values
// are ~1 KB. The encoding is a tagged tree of the values JSON decodes to
// (what an unstructured object holds): a tag byte, then
//
//	tagNil, tagFalse, tagTrue   nothing
//	tagInt                      a zigzag varint (int64)
//	tagFloat                    8 bytes, little-endian IEEE 754 (float64)
//	tagString                   a uvarint length, the bytes
//	tagInterned                 a uvarint index in the table of strings
//	                            kept once (vmintern.go)
//	tagMap                      a uvarint count, then per entry a key
//	                            and a value; a key is a uvarint n, then
//	                            n/2 bytes when n is even, the string at
//	                            index n/2 of the table when n is odd
//	tagSlice                    a uvarint count, the values
//
// Decoding (unpack) rebuilds the maps and slices; its strings are slices of
// the packed string or the table's, not copies (a string is immutable), so
// a decode allocates the containers only.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagMap
	tagSlice
	tagInterned
)

// errPackType is a value pack cannot encode (not one JSON decodes to).
var errPackType = errors.New("inventory: value not packable")

// pack encodes obj (an unstructured object's map).
func pack(obj map[string]any) (string, error) {
	b, err := appendValue(make([]byte, 0, 1024), obj)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, tagNil), nil
	case bool:
		if v {
			return append(b, tagTrue), nil
		}
		return append(b, tagFalse), nil
	case int64:
		return binary.AppendVarint(append(b, tagInt), v), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat), math.Float64bits(v)), nil
	case string:
		if i, ok := interned.lookup(v, false); ok {
			return binary.AppendUvarint(append(b, tagInterned), uint64(i)), nil
		}
		return appendString(append(b, tagString), v), nil
	case map[string]any:
		b = binary.AppendUvarint(append(b, tagMap), uint64(len(v)))
		var err error
		for k, e := range v {
			b = appendKey(b, k)
			if b, err = appendValue(b, e); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
		}
		return b, nil
	case []any:
		b = binary.AppendUvarint(append(b, tagSlice), uint64(len(v)))
		var err error
		for i, e := range v {
			if b, err = appendValue(b, e); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return b, nil
	default:
		return nil, fmt.Errorf("%w: %T", errPackType, v)
	}
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendKey appends map key k: its index in the table of strings kept
// once (k joins it when there is room), else k itself.
func appendKey(b []byte, k string) []byte {
	if i, ok := interned.lookup(k, true); ok {
		return binary.AppendUvarint(b, uint64(i)<<1|1)
	}
	return append(binary.AppendUvarint(b, uint64(len(k))<<1), k...)
}

// unpack decodes what pack encoded; its strings share s.
func unpack(s string) (map[string]any, error) {
	d := unpacker{s: s}
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	if d.i != len(s) {
		return nil, fmt.Errorf("inventory: unpack: %d bytes left over", len(s)-d.i)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("inventory: unpack: %T, want an object", v)
	}
	return m, nil
}

// errUnpack is a packed string cut short or malformed.
var errUnpack = errors.New("inventory: unpack: malformed")

type unpacker struct {
	s string
	i int
}

func (d *unpacker) uvarint() (uint64, error) {
	var x uint64
	for shift := uint(0); d.i < len(d.s) && shift < 64; shift += 7 {
		c := d.s[d.i]
		d.i++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x, nil
		}
	}
	return 0, errUnpack
}

func (d *unpacker) str() (string, error) {
	n, err := d.uvarint()
	if err != nil {
		return "", errUnpack
	}
	return d.bytes(n)
}

// bytes is the next n bytes, as a string sharing d.s.
func (d *unpacker) bytes(n uint64) (string, error) {
	if n > uint64(len(d.s)-d.i) {
		return "", errUnpack
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s, nil
}

// key is a map key (appendKey).
func (d *unpacker) key() (string, error) {
	n, err := d.uvarint()
	if err != nil {
		return "", errUnpack
	}
	if n&1 == 0 {
		return d.bytes(n >> 1)
	}
	return d.interned(n >> 1)
}

// interned is the string at index i of the table of strings kept once.
func (d *unpacker) interned(i uint64) (string, error) {
	s, ok := interned.at(i)
	if !ok {
		return "", errUnpack
	}
	return s, nil
}

// count is a container's length, bounded by the bytes left (each element
// takes one at least) so a malformed count cannot allocate much.
func (d *unpacker) count() (int, error) {
	n, err := d.uvarint()
	if err != nil || n > uint64(len(d.s)-d.i) {
		return 0, errUnpack
	}
	return int(n), nil
}

func (d *unpacker) value() (any, error) {
	if d.i >= len(d.s) {
		return nil, errUnpack
	}
	tag := d.s[d.i]
	d.i++
	switch tag {
	case tagNil:
		return nil, nil
	case tagFalse:
		return false, nil
	case tagTrue:
		return true, nil
	case tagInt:
		u, err := d.uvarint()
		return int64(u>>1) ^ -int64(u&1), err
	case tagFloat:
		if len(d.s)-d.i < 8 {
			return nil, errUnpack
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64([]byte(d.s[d.i : d.i+8])))
		d.i += 8
		return f, nil
	case tagString:
		return d.str()
	case tagInterned:
		i, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		return d.interned(i)
	case tagMap:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, n)
		for range n {
			k, err := d.key()
			if err != nil {
				return nil, err
			}
			if m[k], err = d.value(); err != nil {
				return nil, err
			}
		}
		return m, nil
	case tagSlice:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = d.value(); err != nil {
				return nil, err
			}
		}
		return out, nil
	default:
		return nil, errUnpack
	}
}
