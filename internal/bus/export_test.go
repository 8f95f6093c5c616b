package bus

// NakDelay exposes nakDelay to the package's external tests.
var NakDelay = nakDelay
