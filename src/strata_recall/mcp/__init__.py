"""The MCP front end: Strata's tools and lifecycle hooks for agent hosts ([003] §26.4)."""
