"""The MCP page: servers × clients (``mcp_page``); its actions are ``ui.control.controller_mcp``."""
