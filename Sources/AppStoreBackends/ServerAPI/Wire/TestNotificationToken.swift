/// Request a Test Notification's answer: the token to ask Get Test Notification Status with.
struct TestNotificationToken: Decodable {
    var testNotificationToken: String
}
