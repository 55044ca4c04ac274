/// Word lists for demo data. Invented for Northwind's demo store; accents are deliberate, so that accent-insensitive
/// search has something to find.
enum Vocabulary {
    static let categories: [(String, String)] = [
        ("Drinks", "Juices, coffees, teas, ciders and beers"),
        ("Sauces & Spreads", "Mustards, chutneys, dressings and sweet spreads"),
        ("Sweets", "Biscuits, chocolates, pastries and candied fruit"),
        ("Cheese & Dairy", "Hard and soft cheeses, butter and cream"),
        ("Bread & Grains", "Crispbreads, pasta, rice and breakfast cereals"),
        ("Charcuterie", "Cured sausages, hams and pâtés"),
        ("Fruit & Vegetables", "Dried fruit, preserved vegetables and pulses"),
        ("Fish & Seafood", "Smoked, salted and tinned fish and shellfish"),
    ]

    /// Product names per category, in the order of `categories`.
    static let productNames: [[String]] = [
        [
            "Côte du Rhône Villages", "Earl Grey Impérial", "Café de Colombie", "Sidra Asturiana", "Kräuterlimonade",
            "Pilsner Urquell Style", "Thé à la Menthe", "Limonada Rosé", "Glögg Spiced Wine", "Yerba Maté",
        ],
        [
            "Moutarde à l'Ancienne", "Chimichurri Picante", "Mango Chutney", "Crème de Marrons", "Harissa Douce",
            "Aïoli Provençal", "Pesto Genovese", "Salsa Verde", "Confiture d'Abricots", "Tapenade Noire",
        ],
        [
            "Crème Brûlée Biscuits", "Pain d'Épices", "Chocolat Noir 70%", "Marrons Glacés", "Turrón de Jijona",
            "Lebkuchen Herzen", "Panforte di Siena", "Speculoos", "Nougat de Montélimar", "Stroopwafels",
        ],
        [
            "Comté Affiné", "Gruyère Réserve", "Queso Manchego", "Brie de Meaux", "Gjetost", "Pecorino Romano",
            "Crème Fraîche", "Mozzarella di Bufala", "Roquefort Société", "Skyr Naturel",
        ],
        [
            "Knäckebröd Råg", "Farine de Sarrasin", "Pâtes Fraîches", "Arborio Risotto Rice", "Müsli Alpin",
            "Couscous Moyen", "Pumpernickel", "Polenta Bramata", "Galettes de Riz", "Fregola Sarda",
        ],
        [
            "Pâté de Campagne", "Jamón Ibérico", "Saucisson Sec", "Bresaola della Valtellina", "Chorizo Picante",
            "Rillettes du Mans", "Speck Tirolés", "Mortadella Bologna", "Kabanos", "Terrine de Canard",
        ],
        [
            "Tomates Séchées", "Pruneaux d'Agen", "Lentilles du Puy", "Cèpes Séchés", "Artichauts Marinés",
            "Haricots Tarbais", "Figues Sèches", "Poivrons Piquillo", "Câpres au Sel", "Cornichons Extra-fins",
        ],
        [
            "Saumon Fumé", "Sardines à l'Huile", "Anchoas del Cantábrico", "Bacalao Salado", "Rollmops",
            "Rillettes de Thon", "Soupe de Poissons", "Gravlax", "Moules Marinées", "Bouillabaisse Concentrée",
        ],
    ]

    static let supplierKinds = [
        "Provisions", "Trading Co.", "Épicerie Fine", "Importers", "Foods Ltd.", "& Fils",
        "Delicatessen", "Gourmet Supply", "Handelshaus", "Exportadora",
    ]
    static let shopKinds = [
        "Market", "Delicatessen", "Épicerie", "Grocers", "Food Hall", "Trading Post", "Corner Shop",
        "Bodega", "Feinkost", "Mercado", "Supermarket", "Provisions",
    ]
    static let contactTitles = [
        "Owner", "Sales Representative", "Purchasing Manager", "Accounting Manager",
        "Marketing Manager", "Order Administrator", "Sales Agent",
    ]
    static let packagings = [
        "10 boxes x 20 bags", "24 - 12 oz bottles", "12 - 550 ml bottles", "48 - 6 oz jars",
        "36 boxes", "12 - 8 oz jars", "1 kg pkg.", "10 - 500 g pkgs.", "24 - 250 g tins",
        "20 - 1 kg tins", "6 - 750 ml bottles", "16 - 2 kg boxes",
    ]
    static let surnames = [
        "Moreau", "Lefèvre", "García", "Müller", "Rossi", "Nakamura", "Okafor", "Johansson",
        "Kowalski", "Dubois", "Fernández", "Schneider", "Bianchi", "Novák", "Murphy", "Haddad",
        "Lindqvist", "Papadopoulos", "Østergaard", "Çelik", "Silva", "Nguyen", "Ivanova", "Byrne",
    ]
    static let firstNames: [(name: String, courtesy: String)] = [
        ("Amélie", "Ms."), ("Jonas", "Mr."), ("Lucía", "Ms."), ("Mateo", "Mr."), ("Ingrid", "Ms."), ("Kenji", "Mr."),
        ("Chiara", "Ms."), ("Tomás", "Mr."), ("Zofia", "Ms."), ("Oskar", "Mr."), ("Aisha", "Dr."), ("Émile", "Mr."),
        ("Hanna", "Mrs."), ("Diego", "Mr."), ("Søren", "Mr."), ("Elif", "Ms."),
    ]
    static let places: [(city: String, country: String)] = [
        ("Lyon", "France"), ("Sevilla", "Spain"), ("Hamburg", "Germany"), ("Torino", "Italy"), ("Göteborg", "Sweden"),
        ("Porto", "Portugal"), ("Kraków", "Poland"), ("Cork", "Ireland"), ("Portland", "USA"), ("Montréal", "Canada"),
        ("Zürich", "Switzerland"), ("Bruxelles", "Belgium"), ("Århus", "Denmark"), ("Graz", "Austria"),
        ("São Paulo", "Brazil"), ("México D.F.", "Mexico"), ("Bergen", "Norway"), ("Helsinki", "Finland"),
        ("London", "UK"), ("Buenos Aires", "Argentina"), ("Caracas", "Venezuela"), ("Seattle", "USA"),
    ]
    static let streets = [
        "Rue des Lilas", "Calle Mayor", "Hauptstraße", "Via Roma", "Storgatan", "Rua Augusta",
        "Main Street", "Kingsway", "Avenue du Parc", "Nørregade", "Ringstraße", "Harbour Road",
    ]
    static let shippers = ["Swift Parcel", "Northwind Freight", "Blue Harbour Logistics"]
    static let regions = ["Eastern", "Western", "Northern", "Southern"]
}
