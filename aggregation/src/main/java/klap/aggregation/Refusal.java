package klap.aggregation;

/**
 * Why a launch is left as written: the warning's message and id ({@link ChildRefusals}, reported
 * by {@link SitePlanner}).
 */
record Refusal(String message, String id) {
}
