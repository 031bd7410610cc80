#!/usr/bin/env bats
# placeholder

load helpers
