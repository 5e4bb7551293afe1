# Accounts use Django's own User and Group models. This module exists because Django sends
# post_migrate only to apps with a models module, and that signal builds the role groups.
