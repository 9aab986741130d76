// The aggregate functions a view maintains, by the name the logical plan and the dataflow plan
// both give them (the planner binds a call to one; the IVM's Reduce computes it).
export type AggregateFn =
  | 'count_star'
  | 'count'
  | 'sum'
  | 'avg'
  | 'min'
  | 'max'
  | 'bool_and'
  | 'bool_or'
  | 'var_pop'
  | 'var_samp'
  | 'stddev_pop'
  | 'stddev_samp'
  | 'string_agg'
  | 'jsonb_agg'
  | 'jsonb_object_agg'
  | 'array_agg';
