package contract

// Knowledge request-reply subjects served by the query service. Payloads
// are the kb package's SaveRequest, UpdateRequest, SearchRequest and
// KBGetRequest.
const (
	SubjectKBSave   = "kh.kb.save"
	SubjectKBUpdate = "kh.kb.update"
	SubjectKBGet    = "kh.kb.get"
	SubjectKBReview = "kh.kb.review"
	SubjectSearchKB = "kh.search.kb"
)

// KBGetRequest reads one knowledge entry as a caller holding Scopes.
type KBGetRequest struct {
	ID     string   `json:"id"`
	Scopes []string `json:"scopes,omitempty"`
}
