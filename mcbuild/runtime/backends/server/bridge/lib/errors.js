'use strict'
/** An op failure with a machine-readable code, sent back as {ok:false, error:{code, message}}. */
class OpError extends Error {
  constructor (code, message, details) {
    super(message)
    this.code = code
    this.details = details
  }
}

/** Codes the protocol itself produces; ops add their own (no_result, missing_item, stuck, ...). */
const CODES = {
  BAD_REQUEST: 'bad_request', // not JSON, not an object, missing id/op
  UNKNOWN_OP: 'unknown_op',
  TIMEOUT: 'timeout', // the request's deadline passed in Node
  NOT_CONNECTED: 'not_connected',
  INVALID_ARGS: 'invalid_args',
  INTERNAL: 'internal' // an unexpected exception inside an op
}

module.exports = { OpError, CODES }
