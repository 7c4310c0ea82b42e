//! `App::new` reads nothing from the user's config folder: the shell loads the kernel
//! categories once and passes them in (`App::with_categories`). This test points
//! `$XDG_CONFIG_HOME` at a folder whose categories file renames every kernel; it runs
//! in its own test binary, as it changes the environment.

use std::path::Path;

use grove::app::keymap::Keymap;
use grove::app::App;
use grove::gpu::classify::Categories;
use grove::load::load_path;

fn trace() -> grove::model::Profile {
    load_path(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/demo.trace.json.gz")).unwrap()
}

fn categories_of(app: &App) -> Vec<String> {
    app.kernels
        .rows
        .iter()
        .map(|r| r.category.clone())
        .collect()
}

#[test]
fn app_new_ignores_the_config_folder() {
    let dir = std::env::temp_dir().join(format!("grove-config-test-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("grove")).unwrap();
    std::fs::write(
        dir.join("grove").join("categories.toml"),
        "[[category]]\nname = \"mine\"\nmatch = '.'\ncolor = 1\n",
    )
    .unwrap();
    std::env::set_var("XDG_CONFIG_HOME", &dir);
    let plain = App::new(trace(), Keymap::default_map());
    assert!(!categories_of(&plain).is_empty());
    assert!(!categories_of(&plain).iter().any(|c| c == "mine"));
    // What the shell does: load the user's categories once and pass them in.
    let user = Categories::load(None).unwrap();
    let configured = App::with_categories(trace(), Keymap::default_map(), user);
    assert!(categories_of(&configured).iter().all(|c| c == "mine"));
    let _ = std::fs::remove_dir_all(&dir);
}
