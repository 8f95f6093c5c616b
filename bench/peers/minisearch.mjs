// MiniSearch with its default options, as a reference engine for knowhub's
// ranking bench (minisearch.go drives it).
//
//   node minisearch.mjs SECTIONS.jsonl
//
// SECTIONS.jsonl holds one {"id", "title", "summary", "heading", "body"}
// object a line. Once every section is indexed, the script prints
// {"ready": true, "documents": N, "ms": T} and then answers requests on
// standard input, one JSON object a line each way:
//
//   {"q": "query text", "k": 1000}  ->  {"hits": [[id, score], ...], "us": T}
//
// hits are MiniSearch's results, best first, at most k of them; us is the
// time search took in microseconds. A request that fails gets {"error": "..."}.
// The script ends when standard input closes.
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import MiniSearch from 'minisearch'

const file = process.argv[2]
if (!file) {
  process.stderr.write('usage: node minisearch.mjs SECTIONS.jsonl\n')
  process.exit(2)
}

const start = performance.now()
// Default options: only the fields to index are required.
const index = new MiniSearch({ fields: ['title', 'summary', 'heading', 'body'] })
let documents = 0
for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
  if (line.trim() === '') continue
  index.add(JSON.parse(line))
  documents++
}
const write = (obj) => process.stdout.write(JSON.stringify(obj) + '\n')
write({ ready: true, documents, ms: performance.now() - start })

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === '') continue
  try {
    const { q, k } = JSON.parse(line)
    if (typeof q !== 'string' || !Number.isInteger(k) || k < 0) {
      throw new Error('want {"q": string, "k": integer >= 0}')
    }
    const t = performance.now()
    const results = index.search(q)
    const us = Math.round((performance.now() - t) * 1000)
    write({ hits: results.slice(0, k).map((r) => [r.id, r.score]), us })
  } catch (err) {
    write({ error: String(err && err.message ? err.message : err) })
  }
}
