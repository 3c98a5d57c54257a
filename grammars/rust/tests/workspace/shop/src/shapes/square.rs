pub struct Square {
    pub side: f64,
}
