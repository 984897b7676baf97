"""Go as Grove's webhook sees values: decoding into typed structs, ``Semantic.DeepEqual``,
``json.Marshal``, ``%q``, quantities, ``strconv.Atoi`` and apimachinery's field errors; no rule."""
