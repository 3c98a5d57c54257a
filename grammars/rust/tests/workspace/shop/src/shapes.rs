mod circle;
mod square;

pub use circle::Circle;
pub use square::Square;

pub trait Shape {
    fn area(&self) -> f64;

    fn describe(&self) -> String {
        let area = self.area();
        area.to_string()
    }
}

impl Shape for Square {
    fn area(&self) -> f64 {
        self.side * self.side
    }
}
