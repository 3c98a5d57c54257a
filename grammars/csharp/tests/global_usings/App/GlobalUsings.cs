global using Shop.Billing;
