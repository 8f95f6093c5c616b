package api

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/knowhub/knowhub/internal/contract"
	"github.com/knowhub/knowhub/internal/transcript"
)

// schemas is the metadata of a NATS micro endpoint: the JSON Schemas of
// its request and its reply, inferred from the Go types the endpoint
// decodes and encodes, so that `nats micro info knowhub` shows them.
func schemas[Req, Resp any]() map[string]string {
	return map[string]string{
		"request_schema":  schemaJSON[Req](),
		"response_schema": schemaJSON[Resp](),
		"format":          "application/json",
	}
}

// extractSchemas: kh.extract takes a transcript (one JSON object).
func extractSchemas() map[string]string {
	return schemas[transcript.Transcript, contract.ExtractReply]()
}

func schemaJSON[T any]() string {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("endpoint schema: %v", err)) // a programming error, caught by every test
	}
	data, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("endpoint schema: %v", err))
	}
	return string(data)
}
