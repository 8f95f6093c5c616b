package kb

import "github.com/knowhub/knowhub/internal/contract"

// The knowledge payloads are part of the wire contract; kb works on them
// under short names.
type (
	Source         = contract.KBSource
	Case           = contract.KBCase
	Eval           = contract.KBEval
	Entry          = contract.KBEntry
	SaveRequest    = contract.KBSaveRequest
	SaveResponse   = contract.KBSaveResponse
	UpdateRequest  = contract.KBUpdateRequest
	UpdateResponse = contract.KBUpdateResponse
	SearchRequest  = contract.KBSearchRequest
	Hit            = contract.KBHit
	SearchResponse = contract.KBSearchResponse
	Event          = contract.KBEvent
	MergeCounts    = contract.KBMerge
	Evolution      = contract.KBEvolution
)
