package redact

// keywordIndex finds every occurrence of a set of lower-case keywords in a
// text, comparing ASCII letters case-insensitively.
//
// Keywords of three bytes or more are found through a bitset of hashed
// three-byte prefixes: a position whose three bytes start no keyword costs a
// multiplication and a read of an 8 KiB table. Shorter keywords are compared
// at every position and make the scan slower.
type keywordIndex struct {
	words []string
	rules [][]int // rule indices per word
	bits  *[triBits / 64]uint64
	// bucket maps a prefix hash to 1 + an index in buckets, or 0.
	bucket  []uint16
	buckets [][]int // word ids per prefix hash
	short   []int   // words of one or two bytes
}

// triBits is the number of prefix hashes.
const triBits = 1 << 16

// triHash hashes the three bytes in the low 24 bits of x, each folded with
// fold, to a value below triBits.
func triHash(x uint32) uint32 { return ((x << 8) * 2654435761) >> 16 }

// fold maps A-Z to a-z branch-free. It also merges some punctuation and
// control bytes, which is harmless: it only feeds the prefix hash, and
// every candidate is compared exactly afterwards.
func fold(c byte) uint32 { return uint32(c | 0x20) }

// lower maps A-Z to a-z and every other byte to itself.
func lower(c byte) byte {
	if c-'A' < 26 {
		c |= 0x20
	}
	return c
}

// newKeywordIndex indexes the keywords of each rule; perRule[i] are rule i's.
func newKeywordIndex(perRule [][]string) *keywordIndex {
	k := &keywordIndex{bits: new([triBits / 64]uint64), bucket: make([]uint16, triBits)}
	ids := map[string]int{}
	for ri, kws := range perRule {
		for _, w := range kws {
			id, ok := ids[w]
			if !ok {
				id = len(k.words)
				ids[w] = id
				k.words = append(k.words, w)
				k.rules = append(k.rules, nil)
				k.insert(id, w)
			}
			if n := len(k.rules[id]); n == 0 || k.rules[id][n-1] != ri {
				k.rules[id] = append(k.rules[id], ri)
			}
		}
	}
	return k
}

// insert adds word id to the prefix table.
func (k *keywordIndex) insert(id int, w string) {
	if len(w) < 3 {
		k.short = append(k.short, id)
		return
	}
	h := triHash(fold(w[0])<<16 | fold(w[1])<<8 | fold(w[2]))
	k.bits[h/64] |= 1 << (h % 64)
	if k.bucket[h] == 0 {
		k.buckets = append(k.buckets, nil)
		k.bucket[h] = uint16(len(k.buckets))
	}
	b := k.bucket[h] - 1
	k.buckets[b] = append(k.buckets[b], id)
}

// scan calls hit for every keyword occurrence in s, in order of position.
func (k *keywordIndex) scan(s string, hit func(word, pos int)) {
	if k.short != nil || len(s) < 3 {
		k.scanSlow(s, hit)
		return
	}
	var (
		bits    = k.bits
		bucket  = k.bucket[:triBits]
		buckets = k.buckets
		words   = k.words
	)
	x := fold(s[0])<<8 | fold(s[1])
	for i := 2; i < len(s); i++ {
		x = x<<8 | fold(s[i])
		h := triHash(x)
		if bits[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, id := range buckets[bucket[h]-1] {
			if hasPrefixFold(s[i-2:], words[id]) {
				hit(id, i-2)
			}
		}
	}
}

// scanSlow is scan for keyword sets with words shorter than three bytes,
// which are compared at every position, and for texts shorter than three.
func (k *keywordIndex) scanSlow(s string, hit func(word, pos int)) {
	var x uint32
	for i := range len(s) + 2 {
		if i < len(s) {
			x = x<<8 | fold(s[i])
		}
		p := i - 2
		if p < 0 {
			continue
		}
		k.shortAt(s, p, hit)
		if i >= len(s) {
			continue
		}
		if h := triHash(x); k.bits[h/64]&(1<<(h%64)) != 0 {
			for _, id := range k.buckets[k.bucket[h]-1] {
				if hasPrefixFold(s[p:], k.words[id]) {
					hit(id, p)
				}
			}
		}
	}
}

// shortAt calls hit for the short keywords at s[p:].
func (k *keywordIndex) shortAt(s string, p int, hit func(word, pos int)) {
	for _, id := range k.short {
		if hasPrefixFold(s[p:], k.words[id]) {
			hit(id, p)
		}
	}
}

// hasPrefixFold reports whether s starts with the lower-case word w,
// ignoring the case of ASCII letters in s.
func hasPrefixFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if lower(s[i]) != w[i] {
			return false
		}
	}
	return true
}
