"""The Designer/Judge construction loop (paper Appendix F): an LLM Designer proposes complete
specs, the compiler and the static audits check them, an independent LLM Judge screens them."""
