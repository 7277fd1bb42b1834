'use strict'
module.exports = []
