fn main() {
    deepchess::tensor::runtime::memory::keep_freed_memory();
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(deepchess::cli::run(&args));
}
